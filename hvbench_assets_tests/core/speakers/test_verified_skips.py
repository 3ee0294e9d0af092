"""L7's production path (VerifiedScorer.score_placed) skips Light-ASD where no voice is heard and the mouth landmarks of
faces whose rival check cannot change a score; its scores must equal `combine_verified` of the full `parts`, bit for
bit, on real faces (benchmarks/verified_skips.py checks the shared clips and the speakers set)."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.media import SAMPLE_RATE, load_audio
from hvbench_assets.core.speakers.asd_runtime import OnnxLightAsdScorer
from hvbench_assets.core.speakers.combined import VerifiedScorer, combine_verified
from hvbench_assets.core.speakers.lipsync import PlacedSignals
from hvbench_assets.core.speakers.scoring import TrackFrames, clip_scores, track_audio
from hvbench_assets.testkit.speaker_composites import FPS, MAN, WOMAN, panel_frames
from hvbench_assets_tests.conftest import shared_clip

SECONDS = 5.0
SCORER = VerifiedScorer(OnnxLightAsdScorer())


@pytest.fixture(scope="module")
def faces():
    """The talking man (man_talking_head 0-5 s) and the woman of two_people_talking (13-18 s) as fixed face crops."""
    root = shared_clip(MAN.clip).parent
    return [list(panel_frames(p, root, SECONDS, 224)) for p in (MAN, WOMAN)], load_audio(root / MAN.clip, end_s=SECONDS)


def _both_ways(tracks: list[TrackFrames], audio: np.ndarray) -> tuple[list[list[float]], list[list[float]], list]:
    """(the production rows' scores, combine_verified of the full parts, the prepared signals of the production run)."""
    seen = []

    class Watching(VerifiedScorer):
        def score_placed(self, placed, fps):
            seen.extend(t.signals for t in placed)
            return super().score_placed(placed, fps)

    fast = [r["scores"] for r in clip_scores(Watching(SCORER.asd), tracks, audio, FPS)]
    placed = [PlacedSignals(t.first_frame, SCORER.prepare(iter(t.frames()), track_audio(audio, t.first_frame, t.n_frames, FPS), FPS))
              for t in tracks]
    full = [[float(s) for s in combine_verified(p)] for p in SCORER.parts(placed, FPS)]
    return fast, full, seen


def test_faces_that_meet_under_a_voice_are_compared_and_score_the_same(faces):
    (man, woman), audio = faces
    n = min(len(man), len(woman), int(len(audio) / SAMPLE_RATE * FPS))
    tracks = [TrackFrames(0, 0, n, lambda: iter(man[:n])), TrackFrames(1, 10, n - 10, lambda: iter(woman[: n - 10]))]
    fast, full, seen = _both_ways(tracks, audio)
    assert fast == full
    assert max(fast[0]) > 0  # the man speaks: his rival check decides frames, so both faces' landmarks were read
    assert all("lips" in vars(s) for s in seen)


def test_a_face_alone_or_without_a_voice_needs_no_landmarks(faces):
    (man, _), audio = faces
    n = min(len(man), int(len(audio) / SAMPLE_RATE * FPS))
    for sound in (audio, np.zeros_like(audio)):
        fast, full, seen = _both_ways([TrackFrames(0, 0, n, lambda: iter(man[:n]))], sound)
        assert fast == full
        assert not any("lips" in vars(s) for s in seen)
    assert set(fast[0]) == {-1.0}  # silence: no voice anywhere, every frame -1 without Light-ASD
