"""The time-shift test (shift_test.py) on real faces: a speaker's Light-ASD score falls when his sound is shifted by
half a second; a face mouthing under another voice scores high too, but its score does not fall."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.media import SAMPLE_RATE, load_audio
from hvbench_assets.core.speakers.asd_runtime import OnnxLightAsdScorer
from hvbench_assets.core.speakers.combined import VerifiedScorer
from hvbench_assets.core.speakers.lipsync import PlacedSignals
from hvbench_assets.core.speakers.shift_test import ShiftTest, windows
from hvbench_assets.testkit.speaker_composites import FPS, MAN, WOMAN, Panel, panel_frames
from hvbench_assets_tests.conftest import shared_clip

SECONDS = 5.0


SCORER = VerifiedScorer(OnnxLightAsdScorer())


@pytest.fixture(scope="module")
def man_face():
    """The man of man_talking_head, 0-5 s, as a fixed face crop (he speaks throughout)."""
    return list(panel_frames(MAN, shared_clip(MAN.clip).parent, SECONDS, 224))


def _lagged(frames, audio):
    """The face alone under `audio`, as L7 scores it: Light-ASD at the three lags and the voice gate."""
    n = min(len(frames), int(len(audio) / SAMPLE_RATE * FPS))
    audio = audio[: int(n / FPS * SAMPLE_RATE)]
    part = SCORER.parts([PlacedSignals(0, SCORER.prepare(iter(frames[:n]), audio, FPS))], FPS)[0]
    return part.lagged, part.voice


def test_the_speaker_passes_under_his_own_voice(man_face):
    root = shared_clip(MAN.clip).parent
    lagged, voice = _lagged(man_face, load_audio(root / MAN.clip, end_s=SECONDS))
    test = ShiftTest()
    level, drop = test.drops(lagged, voice)
    assert level > 0 and drop > test.min_drop, (level, drop)
    assert test.verified(lagged, voice, FPS).mean() > 0.9


def test_a_face_under_another_voice_scores_high_but_fails(man_face):
    """The man's moving lips under the woman's voice (two_people_talking 11-16 s): Light-ASD's level stays well
    above zero (alone it would call him a speaker), but shifting the sound barely changes it."""
    root = shared_clip(MAN.clip).parent
    woman = Panel("w", WOMAN.clip, 11.0, WOMAN.crop, 1)
    lagged, voice = _lagged(man_face, load_audio(root / woman.clip, start_s=11.0, end_s=11.0 + SECONDS))
    test = ShiftTest()
    level, drop = test.drops(lagged, voice)
    assert level > 0.5, level
    assert drop < test.min_drop, drop
    assert not test.verified(lagged, voice, FPS).any()


def test_lags_are_half_a_second_each_way():
    assert ShiftTest().lags(25.0) == (0, -12, 12) and ShiftTest().lags(30.0) == (0, -15, 15)


def test_windows_cover_long_tracks_half_overlapping():
    assert windows(100, 150) == [(0, 100)]
    got = windows(400, 150)
    assert got[0] == (0, 150) and got[-1][1] == 400 and all(b - a == 150 for a, b in got)
    assert all(got[i + 1][0] - got[i][0] <= 75 for i in range(len(got) - 1))


def test_no_voice_verifies_nothing():
    lagged = np.ones((3, 50), np.float32)
    assert not ShiftTest().verified(lagged, np.zeros(50, bool), 25.0).any()
    assert ShiftTest().drops(lagged, np.zeros(50, bool)) is None


def test_faces_too_small_to_judge_are_named_not_guessed():
    from hvbench_assets.core.speakers.scoring import MIN_FACE_PX, too_small

    assert too_small(MIN_FACE_PX) is None and too_small(None) is None
    assert too_small(31.6) == "face 32 px (median side) < 40 px: too small to judge its lips"
