"""L7 `combined`: Light-ASD says who speaks when, the offline lip-sync evidence says whether the voice is
anyone's on screen and whose it is not.

Light-ASD (asd_runtime.py) scores each face against the sound on its own: it finds speakers whose lips follow the
voice only loosely (where lip-sync cannot tell them from chance), but it also rates a face that mouths words
under someone else's voice nearly as high as the speaker (benchmarks/speaker_accuracy.py: precision 0.48 on its
own). Lip-sync (lipsync.py) compares the faces on screen, has a chance level per mouth and a voice gate. So:
- anchor (per clip): unless lip-sync finds a speaker in the clip (a face whose mouth beats its chance level and
  every rival for more than `min_run` frames), the voice is taken to be nobody's on screen (a voice-over): every
  frame is capped below zero;
- gate (per frame): no voice around the frame -> -1, nobody speaks;
- rivals (per frame): where a co-visible face's mouth follows the voice clearly better (lip-sync's rival term
  < 0; the rival must beat its own chance level), the ASD score is capped below zero: the voice is that face's;
- else the Light-ASD score: within an anchored clip it finds the speakers lip-sync misses.
No threshold of its own: the bars are lip-sync's and Light-ASD's zero.

`verified` (VerifiedScorer, the default since L7 code version 12) replaces the anchor, which capped every frame of
a clip where lip-sync found no one and so missed most single speakers, by the time-shift test (shift_test.py): a
frame keeps its Light-ASD score only where the score is about this sound's timing (it falls when the sound is
shifted by half a second), the mouth rests in the voice's pauses where it has any (pauses.py), a voice is heard and
no rival's lips follow the voice clearly better."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from hvbench_assets.core.speakers.light_asd import prepare_faces
from hvbench_assets.core.speakers.lipsync import Evidence, LipSyncScorer, PlacedSignals
from hvbench_assets.core.speakers.pauses import PAUSE_RATIO
from hvbench_assets.core.speakers.rules import DEFAULT_MIN_RUN, longest_positive_run
from hvbench_assets.core.speakers.shift_test import ShiftTest

SUPPRESSED = -0.5  # cap of a frame whose voice belongs to another face


@dataclass(frozen=True)
class Prepared:
    faces: np.ndarray  # (T, 112, 112) grayscale crops for Light-ASD
    audio: np.ndarray
    lips: object  # lipsync.FrameSignals


@dataclass(frozen=True)
class Parts:
    """Per frame of one track: each method's score and the lip-sync evidence the combination reads."""

    asd: np.ndarray
    lipsync: np.ndarray
    voice: np.ndarray  # bool: a voice is heard around the frame
    evidence: Evidence  # lip-sync: sync above its chance level, above the best rival's
    seen: np.ndarray  # bool: the mouth's landmarks were found
    anchored: bool = True  # lip-sync finds a speaker somewhere in the clip
    lagged: np.ndarray | None = None  # (3, T): Light-ASD with the sound as heard, shifted earlier, later
    verified: np.ndarray | None = None  # bool per frame: the shift test passes (shift_test.py)
    fps: float | None = None
    second: np.ndarray | None = None  # (3, T) like `lagged`, from a second network (LR-ASD; benchmarks only)
    motion: np.ndarray | None = None  # the mouth region's change per frame (lips.py), for the pause check

    @property
    def combined(self) -> np.ndarray:
        return combine(self)

    @property
    def checked(self) -> np.ndarray:
        """The `verified` method's scores (combine_verified)."""
        return combine_verified(self)

    @property
    def beaten(self) -> np.ndarray:
        """A rival's mouth follows the voice clearly better."""
        return self.evidence.above_rivals < 0


@dataclass
class CombinedScorer:
    asd: object  # asd_runtime.OnnxLightAsdScorer or LightAsdScorer
    lips: LipSyncScorer = field(default_factory=LipSyncScorer)
    min_run: int = DEFAULT_MIN_RUN  # the run rule that makes a lip-sync speaker (the anchor)

    @property
    def backend(self) -> str:
        return self.asd.backend

    @property
    def model(self) -> str:
        return (f"{self.asd.model}; kept where a voice is heard, lip-sync finds a speaker in the clip and no other "
                f"face's lips follow the voice better ({self.lips.model})")

    def load(self):
        return self.asd.load()

    def prepare(self, frames_bgr, audio: np.ndarray, fps: float) -> Prepared:
        """One pass over the frames feeds both sides: grayscale crops kept, mouth signals computed."""
        self.asd.load()  # fail on missing weights before any decoding
        faces: list[np.ndarray] = []

        def tap(frames):
            for img in frames:
                faces.append(prepare_faces([img])[0])
                yield img

        lips = self.lips.prepare(tap(frames_bgr), audio, fps)
        crops = np.stack(faces) if faces else prepare_faces([])
        return Prepared(crops, audio, lips)

    def parts(self, tracks: list[PlacedSignals], fps: float, asd: list[np.ndarray] | None = None) -> list[Parts]:
        lip_tracks = [PlacedSignals(t.first_frame, t.signals.lips) for t in tracks]
        if asd is None:
            asd = self.asd.score_prepared([(t.signals.faces, t.signals.audio) for t in tracks], fps)
        evidence = self.lips.evidence(lip_tracks, fps)
        lipsync = [self.lips._scores(t.signals, ev.above_chance, ev.above_rivals, fps) for t, ev in zip(lip_tracks, evidence)]
        anchored = any(longest_positive_run(x)[0] > self.min_run for x in lipsync)
        return [Parts(a, ls, self.lips.gate(t.signals, fps), ev, t.signals.seen_mask, anchored, motion=t.signals.motion)
                for a, ls, t, ev in zip(asd, lipsync, lip_tracks, evidence)]

    def score_placed(self, tracks: list[PlacedSignals], fps: float) -> list[np.ndarray]:
        return [combine(p) for p in self.parts(tracks, fps)]


@dataclass
class VerifiedScorer(CombinedScorer):
    """L7 `verified`: Light-ASD kept where the time-shift test passes, a voice is heard and no rival's lips follow
    the voice clearly better. Its parts carry every method's evidence (the benchmark reads all of them)."""

    test: ShiftTest = field(default_factory=ShiftTest)

    @property
    def model(self) -> str:
        t = self.test
        return (f"{self.asd.model}; kept where its {t.window_s:g} s mean is positive and falls by more than "
                f"{t.min_drop:g} when the sound is shifted by {t.shift_s:g} s and the mouth rests in the voice's pauses "
                f"(under {PAUSE_RATIO:g} of its motion under the voice), a voice is heard and no other face's lips "
                f"follow the voice better ({self.lips.model})")

    def parts(self, tracks: list[PlacedSignals], fps: float) -> list[Parts]:
        lags = self.test.lags(fps)
        lagged = self.asd.score_lagged([(t.signals.faces, t.signals.audio) for t in tracks], fps, lags)
        base = CombinedScorer.parts(self, tracks, fps, asd=[x[0] for x in lagged])
        return [replace(p, lagged=x, fps=fps, verified=self.test.verified(x, p.voice, fps, mouth=(p.motion, p.seen)))
                for p, x in zip(base, lagged)]

    def score_placed(self, tracks: list[PlacedSignals], fps: float) -> list[np.ndarray]:
        return [combine_verified(p) for p in self.parts(tracks, fps)]


def combine(p: Parts) -> np.ndarray:
    out = np.where(p.beaten | (not p.anchored), np.minimum(p.asd, SUPPRESSED), p.asd)
    return np.round(np.where(p.voice, out, -1.0), 4).astype(np.float32)


def combine_verified(p: Parts) -> np.ndarray:
    out = np.where(p.beaten | ~p.verified, np.minimum(p.asd, SUPPRESSED), p.asd)
    return np.round(np.where(p.voice, out, -1.0), 4).astype(np.float32)
