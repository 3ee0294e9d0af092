"""Audio-visual synchrony: does a mouth move with THIS voice? Pure numpy on per-frame signals.

Two visual signals are compared with the voice's loudness per video frame in two bands, 1-3 and 3-7 kHz
(dB): the mouth region's frame-to-frame change, and the inner-lip gap from the landmarks (the mouth
opening). Each is band-passed and correlated with each envelope over windows of a few seconds at the best of
a few small lags, and the window's synchrony is the mean over signals and envelopes. Frames whose face the
landmark detector did not find are left out of the correlation (a hand over the mouth, a turned head): they
carry no lip evidence.

Measured on composites of real talking heads (benchmarks/speaker_accuracy.py, whole-track correlations):
mouth motion alone at 0.3-4 Hz separated speakers from mouthing faces with AUC 0.84, the opening alone at most
0.87; their mean, the opening at 1.5-5 and 2-8 Hz with the sound up to 160 ms after the lips, 0.95: the two
signals' chance correlations are largely independent, so averaging them shrinks chance more than signal.
With dlib's landmarks on 60-150 px faces single landmark errors dominate the opening at 2-8 Hz alone.
The envelopes above 1 kHz replaced the wideband loudness (benchmarks/speaker_sync.py, 4 s windows of real
faces against their own voice, other voices and their voice shifted): AUC 0.68 -> 0.86, the man's own sync
0.38 -> 0.55 at the same chance level (median about 0.15). Lip opening shapes the upper formants and the
fricatives; the strong low band mostly carries voicing, which goes on behind closed lips."""

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
VOICE_BANDS_HZ = ((1000.0, 3000.0), (3000.0, 7000.0))  # where the voice is read (see above)


def loudness_per_frame(audio: np.ndarray, n_frames: int, fps: float) -> np.ndarray:
    """RMS loudness in dB of each video frame's own audio span (audio starts with frame 0), floored."""
    edges = np.round(np.arange(n_frames + 1) / fps * SAMPLE_RATE).astype(int)
    padded = np.pad(audio.astype(np.float64), (0, max(0, edges[-1] - len(audio))))
    power = np.add.reduceat(padded**2, edges[:-1]) / np.maximum(np.diff(edges), 1) if n_frames else np.zeros(0)
    db = 10 * np.log10(np.maximum(power, 1e-10))
    return np.maximum(db, db.max() - FLOOR_DB) if n_frames else db


def voice_envelopes(audio: np.ndarray, n_frames: int, fps: float, bands=VOICE_BANDS_HZ) -> np.ndarray:
    """(len(bands), n_frames): each frame's own audio span's energy in each frequency band, in dB, each band
    floored FLOOR_DB below its loudest frame (audio starts with frame 0)."""
    if not n_frames:
        return np.zeros((len(bands), 0))
    edges = np.round(np.arange(n_frames + 1) / fps * SAMPLE_RATE).astype(int)
    span = int(max(np.diff(edges).max(), 2))
    padded = np.pad(audio.astype(np.float64), (0, max(0, edges[-1] + span - len(audio))))
    spans = padded[edges[:-1, None] + np.arange(span)[None, :]] * np.hanning(span)
    nfft = 1 << (span - 1).bit_length()
    power = np.abs(np.fft.rfft(spans, nfft, axis=1)) ** 2
    f = np.fft.rfftfreq(nfft, 1 / SAMPLE_RATE)
    out = []
    for lo, hi in bands:
        db = 10 * np.log10(np.maximum(power[:, (f >= lo) & (f < hi)].sum(axis=1), 1e-10))
        out.append(np.maximum(db, db.max() - FLOOR_DB))
    return np.array(out)


def bandpass(x: np.ndarray, fps: float, band: tuple[float, float]) -> np.ndarray:
    """Zero-phase FFT band-pass along the last axis (the track is short, so the whole signal is filtered at once;
    leading axes are independent signals)."""
    n = x.shape[-1]
    if n < 4:
        return np.zeros(x.shape)
    spec = np.fft.rfft(x - x.mean(axis=-1, keepdims=True), 2 * n, axis=-1)  # padded: no wrap-around between the ends
    f = np.fft.rfftfreq(2 * n, 1 / fps)
    spec[..., (f < band[0]) | (f > band[1])] = 0
    return np.fft.irfft(spec, 2 * n, axis=-1)[..., :n]


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
    """Largest correlation of v[t] with e[t + lag] over the lags, on masked frames that have a partner (the
    plain definition; `_window_corrs` computes it for all windows at once)."""
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


def windowed_av_sync(streams: Sequence[Stream], voice_db: np.ndarray, seen: np.ndarray, fps: float,
                     window_s: float = 4.0, step_s: float = 0.5) -> np.ndarray:
    """Per frame: the mean over the streams and the voice's envelopes (`voice_db`: one per frame, or one
    row per band as `voice_envelopes` gives) of each pair's `windowed_sync` (each pair's best window
    covering the frame: on a long track the lips' opening and their motion may follow the voice best
    in different seconds). NaN where a pair has no window with enough seen frames. Several voices at once:
    `voice_db` (voices, envelopes, frames) -> (voices, frames)."""
    voice = voice_db if voice_db.ndim > 1 else voice_db[None]
    return np.mean(np.concatenate([_windowed(st, voice, seen, fps, window_s, step_s) for st in streams], axis=-2),
                   axis=-2)


def _windowed(st: Stream, voice_db: np.ndarray, seen: np.ndarray, fps: float, window_s: float,
              step_s: float) -> np.ndarray:
    """`windowed_sync` of one stream against each voice envelope along voice_db's leading axes (..., n), at once:
    a chance level compares one mouth with its voice at two dozen shifts."""
    n = voice_db.shape[-1]
    out = np.full(voice_db.shape, np.nan)
    if n < 4:
        return out
    win = min(n, max(4, int(round(window_s * fps))))
    step = max(1, int(round(step_s * fps)))
    starts = np.array(sorted(set(range(0, n - win + 1, step)) | {n - win}))
    voice = voice_db.astype(np.float64)
    per_band = [_window_corrs(bandpass(fill_missing(st.signal, seen), fps, b), bandpass(voice, fps, b),
                              seen, starts, win, st.lags, max(10, win // 2)) for b in st.bands]
    window_sync = np.mean(per_band, axis=0)  # (..., windows)
    for j, s in enumerate(starts):
        c = window_sync[..., j, None]
        seg = out[..., s : s + win]
        out[..., s : s + win] = np.where(np.isnan(c), seg, np.where(np.isnan(seg), c, np.maximum(seg, c)))
    return out


def _window_corrs(v: np.ndarray, e: np.ndarray, seen: np.ndarray, starts: np.ndarray, win: int,
                  lags: Sequence[int], min_frames: int) -> np.ndarray:
    """`best_lag_corr` of every window [s, s + win) at once, from running sums, for every lag at once and for each
    envelope along e's leading axes: (..., len(starts))."""
    n = len(v)
    idx = np.arange(n)[None, :] + np.asarray(lags)[:, None]  # (lags, n)
    ok = seen[None, :] & (idx >= 0) & (idx < n)
    a = np.where(ok, v[None, :], 0.0)
    b = np.where(ok, e[..., np.clip(idx, 0, n - 1)], 0.0)  # (..., lags, n)
    cnt, sa, sb, saa, sbb, sab = (_window_sums(x, starts, win) for x in (ok.astype(np.float64), a, b, a * a, b * b, a * b))
    with np.errstate(invalid="ignore", divide="ignore"):
        var_a = saa / cnt - (sa / cnt) ** 2
        var_b = sbb / cnt - (sb / cnt) ** 2
        c = (sab / cnt - sa * sb / cnt**2) / np.sqrt(var_a * var_b)
    c = np.where((var_a < 1e-18) | (var_b < 1e-18), 0.0, c)
    c = np.where(cnt < min_frames, np.nan, np.clip(c, -1.0, 1.0))
    return np.fmax.reduce(c, axis=-2)  # the best lag; NaN only where every lag is


def _window_sums(x: np.ndarray, starts: np.ndarray, win: int) -> np.ndarray:
    """Sums of x over [s, s + win) along its last axis, for every start."""
    c = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(x, axis=-1)], axis=-1)
    return c[..., starts + win] - c[..., starts]
