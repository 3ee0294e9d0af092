"""Offline active-speaker scores: is the mouth moving while a voice is heard, and do the mouth's
pixel changes follow the voice's loudness (audio-visual sync)?

Per frame: no voice in the surrounding 0.8 s -> -1 (nobody speaks). Otherwise half the mouth
activity (std of the lip opening vs a "moving mouth" level, clipped to +-1) plus twice the sync
above a margin, where sync is the best correlation (lags within +-3 frames) of mouth-region motion
with loudness over +-1 s, both with their slow trend removed. Positive = speaking. A mouth whose lip gap
hardly changes is never speaking: a still face moved by the camera correlates with a voice by chance.
On the shared clips the sync term separates a speaker (0.14-0.26) from a face that only moves
while someone else talks (-0.04-0.09). Known limits: per-frame sync over 2 s is noisy, so a face
that keeps moving its mouth over unrelated speech (dubbing, voice-over) still gets positive runs;
tiny or profile faces give poor landmarks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hvbench_assets.core.audio import features, vad
from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.speakers.lips import mouth_signals


@dataclass(frozen=True)
class FrameSignals:
    """Per video frame of a track: mouth opening and motion, voice loudness (dBFS), VAD probability."""

    mouth: np.ndarray
    motion: np.ndarray
    loudness_db: np.ndarray
    voice_prob: np.ndarray


def frame_times(n_frames: int, fps: float) -> np.ndarray:
    """Centre time of each crop frame relative to the crop's first frame, at the REAL frame rate."""
    return (np.arange(n_frames) + 0.5) / fps


def audio_signals(audio: np.ndarray, n_frames: int, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """Loudness and voice probability read at every frame centre (audio starts with frame 0)."""
    t = frame_times(n_frames, fps)
    hop = 160  # 10 ms
    loud = features.rms_db(audio, 400, hop)
    loudness = features.resample_track(loud, SAMPLE_RATE / hop, t - 200 / SAMPLE_RATE)
    probs = vad.speech_probabilities(audio) if len(audio) >= vad.CHUNK else np.zeros(0, np.float32)
    voice = features.resample_track(probs, vad.VAD_RATE, t - vad.CHUNK / 2 / SAMPLE_RATE)
    return loudness, voice


def _fill_and_smooth(m: np.ndarray) -> np.ndarray:
    m = m.astype(np.float64).copy()
    ok = np.isfinite(m)
    if not ok.any():
        return np.zeros_like(m)
    m[~ok] = np.interp(np.nonzero(~ok)[0], np.nonzero(ok)[0], m[ok])
    p = np.pad(m, 1, mode="edge")  # 3-frame median: removes single-frame landmark jumps
    return np.median(np.stack([p[:-2], p[1:-1], p[2:]]), axis=0)


def detrend(x: np.ndarray, half: int) -> np.ndarray:
    """x minus its moving average over 2*half+1 frames: keeps syllable-rate changes only."""
    kernel = np.ones(2 * half + 1) / (2 * half + 1)
    return x - np.convolve(np.pad(x, half, mode="edge"), kernel, mode="valid")


def _windows(x: np.ndarray, half: int) -> list[np.ndarray]:
    return [x[max(0, i - half) : i + half + 1] for i in range(len(x))]


def windowed_std(x: np.ndarray, half: int) -> np.ndarray:
    return np.array([w.std() for w in _windows(x, half)])


def windowed_corr(a: np.ndarray, b: np.ndarray, half: int) -> np.ndarray:
    out = np.zeros(len(a))
    for i, (x, y) in enumerate(zip(_windows(a, half), _windows(b, half))):
        if len(x) > 2 and x.std() > 1e-9 and y.std() > 1e-9:
            out[i] = np.corrcoef(x, y)[0, 1]
    return out


def best_lag_corr(a: np.ndarray, b: np.ndarray, half: int, max_lag: int) -> np.ndarray:
    best = np.full(len(a), -1.0)
    for lag in range(-max_lag, max_lag + 1):
        shifted = np.concatenate([np.full(max(lag, 0), b[0]), b, np.full(max(-lag, 0), b[-1])])
        shifted = shifted[max(-lag, 0) : max(-lag, 0) + len(b)] if lag < 0 else shifted[: len(b)]
        best = np.maximum(best, windowed_corr(a, shifted, half))
    return best


@dataclass
class LipSyncScorer:
    """Offline L7 backend over (face-crop frames, audio aligned to the crop start, real fps)."""

    moving_mouth: float = 0.02  # std of (inner-lip gap / eye distance) that counts as a moving mouth
    activity_window_s: float = 0.4
    sync_window_s: float = 1.0
    sync_margin: float = 0.12
    activity_weight: float = 0.5
    sync_weight: float = 2.0
    detrend_s: float = 0.3
    voice_threshold: float = 0.5
    max_lag_frames: int = 3
    still_mouth_activity: float = -0.5  # activity at or below this (lip-gap std <= half a moving mouth) vetoes
    backend: str = "offline"
    model: str = "dlib-68 lip motion x silero-vad/loudness sync"

    def signals(self, frames_bgr, audio: np.ndarray, fps: float) -> FrameSignals:
        loud, voice = audio_signals(audio, len(frames_bgr), fps)
        mouth = mouth_signals(frames_bgr)
        return FrameSignals(mouth.opening, mouth.motion, loud, voice)

    def scores_from_signals(self, sig: FrameSignals, fps: float) -> np.ndarray:
        n = len(sig.mouth)
        if n == 0:
            return np.zeros(0, np.float32)
        opening = _fill_and_smooth(sig.mouth)
        act_half = max(1, int(round(self.activity_window_s * fps)))
        trend = max(1, int(round(self.detrend_s * fps)))
        voice_w = np.array([w.mean() for w in _windows(sig.voice_prob.astype(np.float64), act_half)])
        activity = np.clip((windowed_std(opening, act_half) - self.moving_mouth) / self.moving_mouth, -1, 1)
        sync = best_lag_corr(detrend(sig.motion.astype(np.float64), trend),
                             detrend(sig.loudness_db.astype(np.float64), trend),
                             max(2, int(round(self.sync_window_s * fps))), self.max_lag_frames)
        speaking = self.activity_weight * activity + self.sync_weight * (sync - self.sync_margin)
        # a mouth that hardly moves is not speaking, whatever chance correlation the sync term finds
        # (a still photo panned by the camera correlates with the voice on ~30 % of its frames)
        speaking = np.where(activity <= self.still_mouth_activity, np.minimum(speaking, -0.5), speaking)
        face_seen = np.isfinite(sig.mouth)
        out = np.where((voice_w >= self.voice_threshold) & face_seen, speaking, -1.0)
        return np.round(out, 4).astype(np.float32)

    def score(self, frames_bgr, audio: np.ndarray, fps: float) -> np.ndarray:
        return self.scores_from_signals(self.signals(frames_bgr, audio, fps), fps)
