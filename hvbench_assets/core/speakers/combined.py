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

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, partial

import numpy as np

from hvbench_assets.core.speakers.light_asd import prepare_faces
from hvbench_assets.core.speakers.lips import MouthSignals
from hvbench_assets.core.speakers.lipsync import Evidence, FrameSignals, LipSyncScorer, PlacedSignals
from hvbench_assets.core.speakers.pauses import PAUSE_RATIO
from hvbench_assets.core.speakers.rules import DEFAULT_MIN_RUN, longest_positive_run
from hvbench_assets.core.speakers.shift_test import ShiftTest

SUPPRESSED = -0.5  # cap of a frame whose voice belongs to another face


@dataclass
class Prepared:
    """A track's inputs to both sides. The mouth's landmarks, lip-sync's costly part, are read when `lips` is first
    used: `VerifiedScorer.score_placed` reads them only for faces whose rival check can change a stored score."""

    faces: np.ndarray  # (T, 112, 112) grayscale crops for Light-ASD
    audio: np.ndarray
    voice_db: np.ndarray  # lip-sync's voice side (LipSyncScorer.voice)
    voice_prob: np.ndarray
    mouth: Callable[[], MouthSignals]

    @cached_property
    def lips(self) -> FrameSignals:
        m = self.mouth()
        return FrameSignals(m.opening, m.motion, self.voice_db, self.voice_prob, m.seen)


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
    defer_lips: bool = False  # see prepare

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
        """One pass over the frames feeds both sides: grayscale crops kept, mouth signals computed. Frames that can
        be read again (an iterable, not an iterator: scoring.clip_scores passes its tracks so) leave the mouth
        signals to a second pass, made only if they are needed (`defer_lips`)."""
        self.asd.load()  # fail on missing weights before any decoding
        if self.defer_lips and not isinstance(frames_bgr, Iterator):
            crops = prepare_faces(frames_bgr)
            return Prepared(crops, audio, *self.lips.voice(audio, len(crops), fps), partial(self.lips.mouth, frames_bgr))
        faces: list[np.ndarray] = []

        def tap(frames):
            for img in frames:
                faces.append(prepare_faces([img])[0])
                yield img

        mouth = self.lips.mouth(tap(frames_bgr))
        crops = np.stack(faces) if faces else prepare_faces([])
        return Prepared(crops, audio, *self.lips.voice(audio, len(crops), fps), lambda: mouth)

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
    defer_lips: bool = True  # score_placed reads the landmarks of few faces

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
        """`combine_verified` of each track's `parts`, without the work that cannot change it (the same scores, bit
        for bit): Light-ASD only on tracks where a voice is heard somewhere (elsewhere every frame is -1), and the
        mouth landmarks only of faces that meet at a frame where `beaten` decides the score (a voice is heard, the
        shift test passes, Light-ASD is above the cap): a face seen alone there is never beaten; and of faces whose
        passing windows have pauses for the pause check to judge."""
        voice = [self.lips.voice_gate(t.signals.voice_prob, fps) for t in tracks]
        heard = [i for i, v in enumerate(voice) if v.any()]
        lagged = dict(zip(heard, self.asd.score_lagged([(tracks[i].signals.faces, tracks[i].signals.audio) for i in heard],
                                                       fps, self.test.lags(fps)) if heard else []))
        # the pause check reads the mouth only where a passing window has pauses enough to judge
        verified = {i: self.test.verified(x, voice[i], fps, mouth=(tracks[i].signals.lips.motion,
                                                                    tracks[i].signals.lips.seen_mask)
                                          if self.test.needs_mouth(x, voice[i], fps) else None)
                    for i, x in lagged.items()}
        spans = [(t.first_frame, t.first_frame + len(t.signals.faces)) for t in tracks]
        compared: set[int] = set()  # faces whose lip-sync evidence is needed: the open frames' faces
        for i, x in lagged.items():
            at = spans[i][0] + np.nonzero(voice[i] & verified[i] & (x[0] > SUPPRESSED))[0]
            rivals = {j for j, (a, b) in enumerate(spans) if j != i and ((at >= a) & (at < b)).any()}
            if rivals:
                compared |= rivals | {i}
        # a face's evidence reads only the faces seen in its frames, so the compared faces suffice where they meet
        order = sorted(compared)
        evidence = dict(zip(order, self.lips.evidence([PlacedSignals(tracks[i].first_frame, tracks[i].signals.lips)
                                                       for i in order], fps)))
        return [_verified_scores(lagged[i][0], evidence[i].above_rivals < 0 if i in evidence else False, verified[i],
                                 voice[i]) if i in lagged else np.full(len(t.signals.faces), -1.0, np.float32)
                for i, t in enumerate(tracks)]


def combine(p: Parts) -> np.ndarray:
    out = np.where(p.beaten | (not p.anchored), np.minimum(p.asd, SUPPRESSED), p.asd)
    return np.round(np.where(p.voice, out, -1.0), 4).astype(np.float32)


def combine_verified(p: Parts) -> np.ndarray:
    return _verified_scores(p.asd, p.beaten, p.verified, p.voice)


def _verified_scores(asd: np.ndarray, beaten, verified: np.ndarray, voice: np.ndarray) -> np.ndarray:
    out = np.where(beaten | ~verified, np.minimum(asd, SUPPRESSED), asd)
    return np.round(np.where(voice, out, -1.0), 4).astype(np.float32)
