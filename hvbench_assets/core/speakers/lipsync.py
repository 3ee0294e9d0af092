"""Offline active-speaker scores: does this face's mouth move with the voice that is heard, better than
the other faces on screen?

Per frame of a track, with a voice in the surrounding 0.8 s (else -1: nobody speaks):
    score = min(sync - floor, min over the two signals of (its sync - its chance level), sync - cross_ratio * best_other)
    floor = max(min_sync, the mean's chance level)
where `sync` is the audio-visual synchrony of the track's mouth (region motion and lip opening, averaged)
with the clip's voice above 1 kHz (core.speakers.avsync: each signal's best 4 s window covering the frame) and
`best_other` the best synchrony of another face visible in the same frame (only a moving mouth in sync
counts: a still one correlates by chance). So a face that mouths other words while someone else's voice
is heard stays below zero, and of several moving mouths only the one(s) following the voice win; two
faces talking at once over a mixed soundtrack both stay positive only while they follow it about equally.
A chance level (`chance_sync`) is what the same mouth reaches against the voice displaced by a second or more:
on a long track, or for a mouth that moves much, a high window comes by chance, and only a face that beats its
own chance level speaks (a face alone on screen mouthing other words has no rival to lose to). The mean must
beat its level by chance_z spreads, and each signal alone its own by signal_chance_z: the two signals' chance
correlations are largely independent, so a chance high of the mean usually rides on one of them.
A mouth whose lip gap hardly changes is never speaking (a still photo panned by the camera correlates
with a voice by chance), and a frame without landmarks is not scored.

Known limits: a turned or hand-covered face gives no lip evidence, so a speaker seen that way may be
missed; 2-3 s of speech are needed before the correlation means anything; a speaker whose lips follow the
voice weakly (the front woman of two_people_talking, her head pulled by the braiding) is not told from chance,
so she is missed rather than guessed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hvbench_assets.core.audio import features, vad
from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.speakers.avsync import mouth_streams, voice_envelopes, windowed_av_sync
from hvbench_assets.core.speakers.lips import MouthSignals, mouth_signals


@dataclass(frozen=True)
class FrameSignals:
    """Per video frame of a track: mouth opening and motion, whether the face was seen, the voice's
    loudness (dB, floored; one row per band of `avsync.voice_envelopes`) and VAD probability. Small: a few
    floats per frame, no pixels."""

    mouth: np.ndarray
    motion: np.ndarray
    voice_db: np.ndarray
    voice_prob: np.ndarray
    seen: np.ndarray | None = None

    @property
    def seen_mask(self) -> np.ndarray:
        return np.isfinite(self.mouth) if self.seen is None else self.seen & np.isfinite(self.mouth)


def frame_times(n_frames: int, fps: float) -> np.ndarray:
    """Centre time of each crop frame relative to the crop's first frame, at the REAL frame rate."""
    return (np.arange(n_frames) + 0.5) / fps


def voice_probability(audio: np.ndarray, n_frames: int, fps: float) -> np.ndarray:
    """VAD probability read at every frame centre (audio starts with frame 0)."""
    t = frame_times(n_frames, fps)
    probs = vad.speech_probabilities(audio) if len(audio) >= vad.CHUNK else np.zeros(0, np.float32)
    return features.resample_track(probs, vad.VAD_RATE, t - vad.CHUNK / 2 / SAMPLE_RATE)


def _fill_and_smooth(m: np.ndarray) -> np.ndarray:
    m = m.astype(np.float64).copy()
    ok = np.isfinite(m)
    if not ok.any():
        return np.zeros_like(m)
    m[~ok] = np.interp(np.nonzero(~ok)[0], np.nonzero(ok)[0], m[ok])
    p = np.pad(m, 1, mode="edge")  # 3-frame median: removes single-frame landmark jumps
    return np.median(np.stack([p[:-2], p[1:-1], p[2:]]), axis=0)


def _windows(x: np.ndarray, half: int) -> list[np.ndarray]:
    return [x[max(0, i - half) : i + half + 1] for i in range(len(x))]


def windowed_std(x: np.ndarray, half: int) -> np.ndarray:
    return np.array([w.std() for w in _windows(x, half)])


def windowed_mean(x: np.ndarray, half: int) -> np.ndarray:
    return np.array([w.mean() for w in _windows(x, half)])


@dataclass(frozen=True)
class PlacedSignals:
    """A track's signals and where its frame 0 lies in the clip (to find the faces seen together)."""

    first_frame: int
    signals: FrameSignals


@dataclass(frozen=True)
class Evidence:
    """Per frame of a track: sync above its own chance level / above the best co-visible rival's (> 0: it is)."""

    above_chance: np.ndarray
    above_rivals: np.ndarray


SHIFT_FRAMES = 100_000  # shifts x frames scored in one pass by chance_sync (bounds its memory on long tracks)


@dataclass
class LipSyncScorer:
    """Offline L7 backend over face-crop frames, audio aligned to each crop's start, the real fps."""

    # correlation a mouth must reach with the voice at least: a 4 s window of a mouth under another voice reaches
    # 0.15 +- 0.1 with the voice's 1-7 kHz envelopes, the talking man 0.55 (benchmarks/speaker_sync.py); the
    # track's own chance level below raises the bar where its mouth or its length make chance highs likely
    min_sync: float = 0.30
    # share of the best co-visible face's synchrony a face must reach to speak: two faces nearly as much in
    # sync both speak; a child mouthing at 0.26 beside the talking man at 0.33 (a five_people_grid L1 crop) not
    cross_ratio: float = 0.9
    sync_window_s: float = 4.0
    moving_mouth: float = 0.02  # std of (inner-lip gap / eye distance) that counts as a moving mouth
    activity_window_s: float = 0.4
    still_mouth_activity: float = -0.5  # activity at or below this (lip-gap std <= half a moving mouth) vetoes
    voice_threshold: float = 0.5
    # chance level: the same mouth against the voice displaced by >= 1 s, at this many evenly spaced shifts;
    # a face must beat the displaced syncs' mean by chance_z of their spread (and min_sync)
    chance_shifts: int = 24
    chance_z: float = 2.0
    signal_chance_z: float = 1.0  # each signal alone must beat its own chance mean by this many spreads
    backend: str = "offline"
    model: str = "dlib-68 mouth motion (0.3-4 Hz) and lip opening (1.5-8 Hz) x voice 1-3 / 3-7 kHz loudness sync above their chance levels, compared across faces"

    def prepare(self, frames_bgr: Iterable[np.ndarray], audio: np.ndarray, fps: float) -> FrameSignals:
        """Per-frame signals of one track; the frames are streamed, never held."""
        mouth = self.mouth(frames_bgr)
        return FrameSignals(mouth.opening, mouth.motion, *self.voice(audio, len(mouth.opening), fps), mouth.seen)

    def mouth(self, frames_bgr: Iterable[np.ndarray]) -> MouthSignals:
        """The pixel side of a track's signals (also what CombinedScorer reads through its `lips`)."""
        return mouth_signals(frames_bgr)

    def voice(self, audio: np.ndarray, n_frames: int, fps: float) -> tuple[np.ndarray, np.ndarray]:
        """The voice side of a track's signals (no pixels): loudness per band and VAD probability per frame."""
        return voice_envelopes(audio, n_frames, fps), voice_probability(audio, n_frames, fps)

    signals = prepare

    def sync(self, sig: FrameSignals, fps: float) -> np.ndarray:
        return np.mean(self._stream_syncs(sig, sig.voice_db, fps), axis=0)

    def _stream_syncs(self, sig: FrameSignals, voice_db: np.ndarray, fps: float) -> list[np.ndarray]:
        """Per mouth signal (motion, opening): its windowed sync with the voice, averaged over the envelopes."""
        return [windowed_av_sync([st], voice_db, sig.seen_mask, fps, self.sync_window_s)
                for st in mouth_streams(sig.motion, sig.mouth)]

    def chance_sync(self, sig: FrameSignals, fps: float) -> tuple[float, np.ndarray]:
        """What this mouth reaches by chance: its best sync against the voice shifted (circularly) by 1 s or more,
        as mean + chance_z * spread over the shifts, for the signals' mean and for each signal. A long track has
        many windows, and a mouth that moves much at low rates correlates widely, so either finds a high window
        by chance. -inf when the track is too short to shift."""
        n = len(sig.mouth)
        lo = int(round(fps))
        shifts = np.unique(np.linspace(lo, n - lo, self.chance_shifts).astype(int)) if n > 2 * lo else []
        if not len(shifts):
            return -np.inf, np.full(2, -np.inf)
        # the shifts at once: (shifts, envelopes, frames) -> per mouth signal (shifts, frames); on a long track a few
        # at a time, so the arrays of every lag (about 40 bytes x envelopes x lags per shift and frame) stay small
        step = max(1, SHIFT_FRAMES // n)
        per_signal = np.concatenate([np.array(self._stream_syncs(sig, np.stack(
            [np.roll(np.atleast_2d(sig.voice_db), k, axis=-1) for k in shifts[i : i + step]]), fps))
            for i in range(0, len(shifts), step)], axis=1)
        best = []  # per shift: the best of the mean, then of each signal
        for streams in per_signal.transpose(1, 0, 2):
            if all(np.isfinite(x).any() for x in streams):
                best.append([np.nanmax(np.mean(streams, axis=0)), *(np.nanmax(x) for x in streams)])
        if len(best) < 6:
            return -np.inf, np.full(2, -np.inf)
        mean, spread = np.mean(best, axis=0), np.std(best, axis=0)
        return float(mean[0] + self.chance_z * spread[0]), mean[1:] + self.signal_chance_z * spread[1:]

    def score_placed(self, tracks: Sequence[PlacedSignals], fps: float) -> list[np.ndarray]:
        """Scores of every track of a clip, each face compared with the faces seen in the same frames."""
        return [self._scores(t.signals, ev.above_chance, ev.above_rivals, fps)
                for t, ev in zip(tracks, self.evidence(tracks, fps))]

    def evidence(self, tracks: Sequence[PlacedSignals], fps: float) -> list[Evidence]:
        """Per track and frame: how far its mouth's sync is above its chance level, and above the best rival's."""
        streams = [[np.nan_to_num(x, nan=-1.0) for x in self._stream_syncs(t.signals, t.signals.voice_db, fps)]
                   for t in tracks]
        syncs = [np.mean(x, axis=0) for x in streams]
        chance = [self.chance_sync(t.signals, fps) for t in tracks]
        floors = [max(self.min_sync, c) for c, _ in chance]
        # each signal must beat its own chance level too: a chance high of the mean often rides on one signal
        own = [np.min([x - c for x, c in zip(xs, per)], axis=0) for xs, (_, per) in zip(streams, chance)]
        # a still mouth's chance correlation is no rival: only moving mouths in sync are compared
        rivals = [np.where((s >= f) & (m > 0) & ~self._still(t.signals, fps), s, -np.inf)
                  for t, s, f, m in zip(tracks, syncs, floors, own)]
        end = max((t.first_frame + len(s) for t, s in zip(tracks, syncs)), default=0)
        out = []
        for i, (t, sync) in enumerate(zip(tracks, syncs)):
            others = np.full(end, -np.inf)
            for j, (u, r) in enumerate(zip(tracks, rivals)):
                if j != i:
                    seg = others[u.first_frame : u.first_frame + len(r)]
                    others[u.first_frame : u.first_frame + len(r)] = np.maximum(seg, r)
            best_other = others[t.first_frame : t.first_frame + len(sync)]
            out.append(Evidence(np.minimum(sync - floors[i], own[i]), sync - self.cross_ratio * best_other))
        return out

    def gate(self, sig: FrameSignals, fps: float) -> np.ndarray:
        """Frames where a voice is heard around the frame (the VAD mean over the activity window)."""
        return self.voice_gate(sig.voice_prob, fps)

    def voice_gate(self, voice_prob: np.ndarray, fps: float) -> np.ndarray:
        half = max(1, int(round(self.activity_window_s * fps)))
        return windowed_mean(voice_prob.astype(np.float64), half) >= self.voice_threshold

    def _still(self, sig: FrameSignals, fps: float) -> np.ndarray:
        """Frames where the lip gap hardly changes (std over the activity window <= half a moving mouth)."""
        half = max(1, int(round(self.activity_window_s * fps)))
        activity = np.clip((windowed_std(_fill_and_smooth(sig.mouth), half) - self.moving_mouth) / self.moving_mouth, -1, 1)
        return activity <= self.still_mouth_activity

    def _scores(self, sig: FrameSignals, above_chance: np.ndarray, above_rivals: np.ndarray, fps: float) -> np.ndarray:
        n = len(sig.mouth)
        if n == 0:
            return np.zeros(0, np.float32)
        speaking = np.minimum(above_chance, above_rivals)
        # a mouth that hardly moves is not speaking, whatever chance correlation the sync term finds
        speaking = np.where(self._still(sig, fps), np.minimum(speaking, -0.5), speaking)
        out = np.where(self.gate(sig, fps) & np.isfinite(sig.mouth), speaking, -1.0)
        return np.round(out, 4).astype(np.float32)

    def score(self, frames_bgr, audio: np.ndarray, fps: float) -> np.ndarray:
        """One track alone (no other face to compare with)."""
        return self.score_placed([PlacedSignals(0, self.prepare(frames_bgr, audio, fps))], fps)[0]
