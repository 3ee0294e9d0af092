"""Offline music / singing detection by signal processing (numpy only), selectable with
music_detector="signal"; the default is YAMNet (core.audio.yamnet), which measured better
(benchmarks/music_detector.py, docs/audio.md). Two cues:

- **sustained tonal peaks**: spectral peaks (300 Hz - 5 kHz) that stay in the same frequency bin
  (+-1 bin) for at least half of a 0.5 s window. Instrument notes, chords and sung vowels hold their
  partials; speech moves its harmonics with its pitch (harmonic k moves k times as far) and its
  vowels are short. Bins held through almost the whole clip are a drone (mains hum, a test tone, a
  whine), not notes, and are ignored. A frame is tonal when such peaks carry >= 20 % of its energy.
- **beat strength**: the autocorrelation of the onset envelope (spectral flux) at lags of 0.3-1.0 s
  (60-200 beats per minute) in 4 s windows; a drum pattern or regular note onsets score >= 0.5,
  speech 0.1-0.25.

Frames that are tonal, or inside a window with a beat, are music (smoothed over 1 s). Measured on
generated tones, chords, piano-like notes over a beat, a sung-vowel melody, espeak-ng speech in three
languages, speech mixed over music and the real clips in ../shared/videos: benchmarks/music_detector.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hvbench_assets.core.media import SAMPLE_RATE

N_FFT = 1024  # 64 ms, 15.6 Hz bins
HOP = 256  # 16 ms
FRAME_RATE = SAMPLE_RATE / HOP
LOW_HZ, HIGH_HZ = 300.0, 5000.0


@dataclass(frozen=True)
class MusicResult:
    music_s: float
    share: float  # of the clip's time
    segments: list[tuple[float, float]] = field(default_factory=list)
    tonal_share: float = 0.0  # share of audible frames with sustained tonal peaks
    beat_strength: float = 0.0  # best window
    frame_rate: float = FRAME_RATE
    frames: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False)  # music per frame
    evidence: dict = field(default_factory=dict)  # what the decision rests on (stored as music_evidence)

    def overlap_s(self, segments: list[tuple[float, float]]) -> float:
        """Seconds of `segments` (e.g. the VAD's speech) during which music plays."""
        total = 0.0
        for a, b in segments:
            i, j = int(a * self.frame_rate), int(np.ceil(b * self.frame_rate))
            total += float(self.frames[i:j].sum()) / self.frame_rate
        return round(total, 3)


def _magnitudes(audio: np.ndarray) -> np.ndarray:
    """(bins, frames) STFT magnitudes between LOW_HZ and HIGH_HZ."""
    n = 1 + max(0, len(audio) - N_FFT) // HOP
    padded = np.zeros((n - 1) * HOP + N_FFT, np.float32)
    padded[: min(len(audio), len(padded))] = audio[: len(padded)]
    frames = sliding_window_view(padded, N_FFT)[::HOP][:n] * np.hanning(N_FFT).astype(np.float32)
    lo, hi = int(LOW_HZ * N_FFT / SAMPLE_RATE), int(HIGH_HZ * N_FFT / SAMPLE_RATE)
    return np.abs(np.fft.rfft(frames, axis=1))[:, lo:hi].T


def tonal_frames(mag: np.ndarray, hold_s: float = 0.5, peak_db: float = 10.0, min_energy: float = 0.2,
                 drone_share: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """(per-frame share of energy in sustained tonal peaks, the frames where that share >= min_energy)."""
    db = 20 * np.log10(mag + 1e-6)
    local = np.median(sliding_window_view(np.pad(db, ((8, 8), (0, 0)), mode="edge"), 17, axis=0), axis=-1)
    peak = (db - local >= peak_db) & (db >= np.roll(db, 1, 0)) & (db >= np.roll(db, -1, 0))
    peak = peak | np.roll(peak, 1, 0) | np.roll(peak, -1, 0)  # +-1 bin: vibrato and tuning wobble
    hold = max(3, int(hold_s * FRAME_RATE) | 1)
    held = sliding_window_view(np.pad(peak.astype(np.float32), ((0, 0), (hold // 2, hold // 2))), hold, axis=1)
    sustained = (held.mean(-1) >= 0.5) & peak
    sustained[sustained.mean(axis=1) >= drone_share] = False  # a bin held all clip long is a drone
    power = mag.astype(np.float64) ** 2
    share = (power * sustained).sum(0) / np.maximum(power.sum(0), 1e-12)
    return share.astype(np.float32), share >= min_energy


def beat_strength(mag: np.ndarray, lags_s: tuple[float, float] = (0.3, 1.0), min_flux_std: float = 5.0) -> float:
    """Peak normalised autocorrelation of the onset envelope at beat-period lags (0 when no onsets:
    a steady tone's flux is numerical noise, std ~0.1, whose autocorrelation means nothing)."""
    flux = np.maximum(0.0, np.diff(np.log(mag + 1e-4), axis=1)).sum(0)
    if len(flux) < int(2 * lags_s[1] * FRAME_RATE):
        return 0.0
    smooth = int(0.5 * FRAME_RATE) | 1
    flux = flux - np.convolve(flux, np.ones(smooth) / smooth, mode="same")
    if flux.std() < min_flux_std:
        return 0.0
    ac = np.correlate(flux, flux, mode="full")[len(flux) - 1 :]
    lo, hi = int(lags_s[0] * FRAME_RATE), int(lags_s[1] * FRAME_RATE) + 1
    # unbiased: each lag averaged over the pairs it has
    ac = ac / (len(flux) - np.arange(len(ac)))
    return float(np.clip(ac[lo:hi].max() / ac[0], 0.0, 1.0))


def time_runs(mask: np.ndarray, rate: float, min_s: float) -> list[tuple[float, float]]:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    return [(round(a / rate, 3), round(b / rate, 3)) for a, b in zip(starts, ends) if (b - a) / rate >= min_s]


@dataclass
class MusicDetector:
    beat_threshold: float = 0.5
    window_s: float = 4.0
    silence_db: float = -50.0
    smooth_s: float = 1.0
    min_segment_s: float = 1.0  # shorter tonal stretches are held synthetic vowels more often than music
    model: str = "signal: sustained tonal peaks + beat strength"

    def detect(self, audio: np.ndarray) -> MusicResult:
        if len(audio) < N_FFT:
            return MusicResult(0.0, 0.0, evidence={"method": "signal", "tonal_share": 0.0, "beat_strength": 0.0})
        mag = _magnitudes(audio)
        n = mag.shape[1]
        frame_db = 10 * np.log10((mag.astype(np.float64) ** 2).sum(0) / (N_FFT / 2) ** 2 + 1e-12)
        audible = frame_db > self.silence_db
        tonal_energy, tonal = tonal_frames(mag)
        music = tonal & audible
        win, step = int(self.window_s * FRAME_RATE), int(self.window_s * FRAME_RATE / 4)
        best_beat = 0.0
        for start in range(0, max(1, n - win + step), step):  # the last window may be short
            seg = slice(start, min(n, start + win))
            strength = beat_strength(mag[:, seg])
            best_beat = max(best_beat, strength)
            if strength >= self.beat_threshold and audible[seg].mean() >= 0.1:
                music[seg] = True  # the whole window: a beat's silences between hits are part of it
        k = int(self.smooth_s * FRAME_RATE) | 1  # majority over 1 s: bridges short gaps, drops blips
        smoothed = np.convolve(music.astype(np.float32), np.ones(k) / k, mode="same") >= 0.5
        segments = time_runs(smoothed, FRAME_RATE, self.min_segment_s)
        frames = np.zeros(n, bool)
        for a, b in segments:
            frames[int(a * FRAME_RATE) : int(b * FRAME_RATE)] = True
        music_s = round(float(frames.sum()) / FRAME_RATE, 3)
        duration = len(audio) / SAMPLE_RATE
        tonal_share = round(float(tonal[audible].mean()) if audible.any() else 0.0, 4)
        return MusicResult(music_s, round(min(1.0, music_s / duration), 4), segments, tonal_share, round(best_beat, 4),
                           FRAME_RATE, frames, {"method": "signal", "tonal_share": tonal_share,
                                                "beat_strength": round(best_beat, 4)})
