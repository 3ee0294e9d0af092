"""Audio-visual synchrony: does a mouth move with THIS voice? Pure numpy on per-frame signals.

Two visual signals are compared with the voice's loudness per video frame (dB): the mouth region's
frame-to-frame change, and the inner-lip gap from the landmarks (the mouth opening). Each is band-passed
and correlated with the loudness over windows of a few seconds at the best of a few small lags, and the
window's synchrony is the mean of the two. Frames whose face the landmark detector did not find are left
out of the correlation (a hand over the mouth, a turned head): they carry no lip evidence.

Measured on composites of real talking heads (benchmarks/speaker_accuracy.py, whole-track correlations):
mouth motion alone at 0.3-4 Hz separated speakers from mouthing faces with AUC 0.84 (the top mouthing face
0.28, two speakers below it), the opening alone at most 0.87; their mean, the opening at 1.5-5 and 2-8 Hz
with the sound up to 160 ms after the lips, 0.95 (mouthing faces <= 0.19, 7 of 9 speakers >= 0.27): the two
signals' chance correlations are largely independent, so averaging them shrinks chance more than signal.
With dlib's landmarks on 60-150 px faces single landmark errors dominate the opening at 2-8 Hz alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE

BANDS_HZ = ((0.3, 3.0), (0.5, 4.0), (1.0, 4.0))  # mouth motion; averaged: each band's chance peaks fall elsewhere
LAGS = (-1, 0, 1, 2)  # frames; positive = the sound comes later than the picture
OPENING_BANDS_HZ = ((1.5, 5.0), (2.0, 8.0))  # syllable rate
OPENING_LAGS = (-2, -1, 0, 1, 2, 3, 4)  # the lips open up to ~150 ms before the sound
FLOOR_DB = 40.0  # loudness more than this below the loudest frame counts as silence


def loudness_per_frame(audio: np.ndarray, n_frames: int, fps: float) -> np.ndarray:
    """RMS loudness in dB of each video frame's own audio span (audio starts with frame 0), floored."""
    edges = np.round(np.arange(n_frames + 1) / fps * SAMPLE_RATE).astype(int)
    padded = np.pad(audio.astype(np.float64), (0, max(0, edges[-1] - len(audio))))
    power = np.add.reduceat(padded**2, edges[:-1]) / np.maximum(np.diff(edges), 1) if n_frames else np.zeros(0)
    db = 10 * np.log10(np.maximum(power, 1e-10))
    return np.maximum(db, db.max() - FLOOR_DB) if n_frames else db


def bandpass(x: np.ndarray, fps: float, band: tuple[float, float]) -> np.ndarray:
    """Zero-phase FFT band-pass (the track is short, so the whole signal is filtered at once)."""
    n = len(x)
    if n < 4:
        return np.zeros(n)
    spec = np.fft.rfft(x - x.mean(), 2 * n)  # padded: no wrap-around between the track's ends
    f = np.fft.rfftfreq(2 * n, 1 / fps)
    spec[(f < band[0]) | (f > band[1])] = 0
    return np.fft.irfft(spec, 2 * n)[:n]


def fill_missing(x: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Frames without evidence take the value interpolated from their neighbours (for filtering only)."""
    x = x.astype(np.float64).copy()
    if ok.all() or not ok.any():
        return np.where(ok, x, 0.0) if not ok.any() else x
    x[~ok] = np.interp(np.nonzero(~ok)[0], np.nonzero(ok)[0], x[ok])
    return x


def _masked_corr(a: np.ndarray, b: np.ndarray, mask: np.ndarray, min_frames: int) -> float:
    if mask.sum() < min_frames:
        return np.nan
    a, b = a[mask], b[mask]
    if a.std() < 1e-9 or b.std() < 1e-9:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def best_lag_corr(v: np.ndarray, e: np.ndarray, mask: np.ndarray, lags=LAGS, min_frames: int = 10) -> float:
    """Largest correlation of v[t] with e[t + lag] over the lags, on masked frames that have a partner."""
    n = len(v)
    best = np.nan
    for lag in lags:
        idx = np.arange(n) + lag
        ok = mask & (idx >= 0) & (idx < n)
        c = _masked_corr(v, e[np.clip(idx, 0, n - 1)], ok, min_frames)
        best = c if np.isnan(best) else max(best, c) if not np.isnan(c) else best
    return best


@dataclass(frozen=True)
class Stream:
    """One visual signal per frame and how it is compared with the voice."""

    signal: np.ndarray
    bands: tuple[tuple[float, float], ...] = BANDS_HZ
    lags: tuple[int, ...] = LAGS


def mouth_streams(motion: np.ndarray, opening: np.ndarray) -> list[Stream]:
    """The two visual signals of a mouth: region motion and inner-lip opening."""
    return [Stream(motion), Stream(np.nan_to_num(opening), OPENING_BANDS_HZ, OPENING_LAGS)]


def windowed_sync(motion: np.ndarray, loudness_db: np.ndarray, seen: np.ndarray, fps: float,
                  window_s: float = 4.0, step_s: float = 0.5, bands=BANDS_HZ) -> np.ndarray:
    """Per frame: the best synchrony of any window (window_s long, every step_s) covering the frame;
    a window's synchrony is the mean over the bands of the best-lag correlation. A track shorter than
    a window is one window. NaN where no window had enough seen frames."""
    return _windowed(Stream(motion, tuple(bands)), loudness_db, seen, fps, window_s, step_s)


def windowed_av_sync(streams: Sequence[Stream], loudness_db: np.ndarray, seen: np.ndarray, fps: float,
                     window_s: float = 4.0, step_s: float = 0.5) -> np.ndarray:
    """Per frame: the mean over the streams of each one's `windowed_sync` (each stream's best window
    covering the frame: on a long track the lips' opening and their motion may follow the voice best
    in different seconds). NaN where a stream has no window with enough seen frames."""
    return np.mean([_windowed(st, loudness_db, seen, fps, window_s, step_s) for st in streams], axis=0)


def _windowed(st: Stream, loudness_db: np.ndarray, seen: np.ndarray, fps: float, window_s: float,
              step_s: float) -> np.ndarray:
    n = len(loudness_db)
    out = np.full(n, np.nan)
    if n < 4:
        return out
    pairs = [(bandpass(fill_missing(st.signal, seen), fps, b), bandpass(loudness_db.astype(np.float64), fps, b))
             for b in st.bands]
    win = min(n, max(4, int(round(window_s * fps))))
    step = max(1, int(round(step_s * fps)))
    starts = list(range(0, n - win + 1, step))
    if starts[-1] != n - win:
        starts.append(n - win)
    for s in starts:
        mask = np.zeros(n, bool)
        mask[s : s + win] = seen[s : s + win]
        c = float(np.mean([best_lag_corr(v, e, mask, st.lags, max(10, win // 2)) for v, e in pairs]))
        if not np.isnan(c):
            seg = out[s : s + win]
            out[s : s + win] = np.where(np.isnan(seg), c, np.maximum(seg, c))
    return out
