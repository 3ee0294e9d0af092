"""The pause check of L7's `verified` method (pauses.py) on real faces: a face mouthing other words under a voice
with pauses moves as much in them as under the voice, and loses the frames the shift test gave it; a real speaker's
mouth rests in his pauses and keeps them; a window without pauses is not judged."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from hvbench_assets.core.media import SAMPLE_RATE, iter_frames, load_audio
from hvbench_assets.core.speakers.lipsync import PlacedSignals
from hvbench_assets.core.speakers.pauses import MIN_FRAMES, PAUSE_RATIO, moves_in_pauses, pause_ratio
from hvbench_assets.core.speakers.scoring import track_audio
from hvbench_assets.testkit.speaker_composites import FPS, MAN, WOMAN, panel_frames
from hvbench_assets_tests.conftest import shared_clip
from hvbench_assets_tests.core.speakers.test_shift_test import SCORER


def _part(frames, audio, fps=FPS):
    n = min(len(frames), int(len(audio) / SAMPLE_RATE * fps))
    signals = SCORER.prepare(iter(frames[:n]), audio[: int(n / fps * SAMPLE_RATE)], fps)
    return SCORER.parts([PlacedSignals(0, signals)], fps)[0], signals.lips


def test_a_face_mouthing_under_a_voice_with_pauses_loses_the_shift_tests_frames():
    """The man of man_talking_head (0-6 s, talking throughout) under the first 6 s of two_people_talking's sound,
    where one short phrase is heard: his syllables happen to meet it (the shift test passes), but his mouth moves in
    the long pauses as much as under the phrase."""
    root = shared_clip(MAN.clip).parent
    frames = list(panel_frames(MAN, root, 5.0, 224))
    part, lips = _part(frames, load_audio(root / WOMAN.clip, end_s=6.0))
    assert SCORER.test.passing(part.lagged, part.voice, FPS)  # the shift test alone calls him a speaker
    assert pause_ratio(lips.motion, lips.seen_mask, part.voice) >= PAUSE_RATIO
    assert not part.verified.any()


def test_a_speaker_whose_mouth_rests_in_his_pauses_keeps_them():
    """dev_duo_left_speaks: the left man speaks with pauses (a quarter of the frames), his L1-style crop."""
    from hvbench_assets.core.vision.backends import build_backend
    from hvbench_assets.core.vision.pipeline import track_video

    clip = shared_clip("speakers/dev_duo_left_speaks.mp4")
    with tempfile.TemporaryDirectory() as tmp:
        res = track_video(clip, Path(tmp), build_backend("offline"))
        left = min((t for t in res.tracks if t.get("face_clip_path")),
                   key=lambda t: np.mean([(b["face_x1"] + b["face_x2"]) / 2 for b in res.boxes if b["track_id"] == t["track_id"]]))
        frames = [f.image for f in iter_frames(left["face_clip_path"])]
        audio = track_audio(load_audio(clip), left["first_frame"], len(frames), res.fps)
        part, lips = _part(frames, audio, res.fps)
    r = pause_ratio(lips.motion, lips.seen_mask, part.voice)
    assert r is not None and r < PAUSE_RATIO, r
    assert part.verified.mean() > 0.9


def test_a_window_without_pauses_is_not_judged():
    voice = np.ones(100, bool)
    motion = np.ones(100, np.float32)
    assert pause_ratio(motion, np.ones(100, bool), voice) is None and not moves_in_pauses(motion, np.ones(100, bool), voice)
    voice[:MIN_FRAMES] = False
    assert pause_ratio(motion, np.ones(100, bool), voice) == pytest.approx(1.0)
    seen = np.ones(100, bool)
    seen[0] = False  # a pause frame without the mouth found does not count
    assert pause_ratio(motion, seen, voice) is None
    motion[:MIN_FRAMES] = 0.5  # the mouth moves half as much in the pauses: a speaker's
    assert not moves_in_pauses(motion, np.ones(100, bool), voice)


def test_the_production_path_reads_the_mouth_for_the_pause_check_and_scores_as_the_parts():
    """L7's asset path (clip_scores -> VerifiedScorer.score_placed) reads a lone face's landmarks only for the pause
    check, and gives the scores of `combine_verified` over the full parts: the mouthing man loses his frames."""
    from hvbench_assets.core.speakers.combined import combine_verified
    from hvbench_assets.core.speakers.scoring import TrackFrames, clip_scores

    root = shared_clip(MAN.clip).parent
    frames = list(panel_frames(MAN, root, 5.0, 224))
    audio = load_audio(root / WOMAN.clip, end_s=6.0)
    n = min(len(frames), int(len(audio) / SAMPLE_RATE * FPS))
    rows = clip_scores(SCORER, [TrackFrames(0, 0, n, lambda: iter(frames[:n]))], audio, FPS)
    part, _ = _part(frames, audio)
    assert rows[0]["scores"] == [float(s) for s in combine_verified(part)]
    assert max(rows[0]["scores"]) <= -0.5  # every frame capped: no speaker


def test_the_combined_scorers_mouth_signals_come_from_its_lip_sync_scorer():
    """CombinedScorer reads mouths through its `lips` (LipSyncScorer.mouth), both on the frames it streams and on
    the deferred second pass, so a lip-sync scorer that reads mouths its own way is the one used."""
    from dataclasses import replace

    from hvbench_assets.core.speakers.lipsync import LipSyncScorer

    calls = []

    class CountingLips(LipSyncScorer):
        def mouth(self, frames_bgr):
            calls.append(1)
            return super().mouth(frames_bgr)

    root = shared_clip(MAN.clip).parent
    frames = list(panel_frames(MAN, root, 1.0, 224))
    audio = load_audio(root / MAN.clip, end_s=1.0)
    for scorer in (replace(SCORER, lips=CountingLips(), defer_lips=False), replace(SCORER, lips=CountingLips())):
        calls.clear()
        prepared = scorer.prepare(iter(frames) if not scorer.defer_lips else frames, audio, FPS)
        mouth = prepared.mouth()
        assert calls == [1] and len(mouth.opening) == len(frames)
