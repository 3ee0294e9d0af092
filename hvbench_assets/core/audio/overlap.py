"""How many voices are heard at once: multi-pitch analysis by harmonic cancellation (de Cheveigné).

Per 20 ms frame the speech band (< 1.5 kHz, at 8 kHz) is cancelled by a comb filter x(t) - x(t - T) at
each of the two best single-voice periods T1 (YIN's dips); the residual is searched for a second period
T2 that is not a multiple or sub-multiple of T1, and the pair is re-estimated once (cancel T2, find T1).
The pair's joint residual energy over the best single-period residual, `score`, is ~1 when one voice
(plus noise) explains the frame and falls towards 0 when a second periodic source is there. A frame
counts as overlapped when score < FRAME_SCORE and its period pair continues in a neighbouring frame
(a second voice has a pitch track; chance pairs do not). Pure numpy/scipy, no weights."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.fft as sfft
from scipy.signal import butter, sosfiltfilt

from hvbench_assets.core.media import SAMPLE_RATE

METHOD = "harmonic-cancellation multi-pitch (YIN + comb, 8 kHz, 80 ms, 2 candidates) v1"
RATE = 8000  # analysis rate: the comb needs the pitch harmonics only
FMIN, FMAX = 60.0, 500.0
WIN_S, HOP_S = 0.08, 0.02
CANDIDATES = 2  # single-voice periods tried as T1
HARMONIC_TOL = 0.03  # T2 within 3 % of k*T1 or T1/k (2 <= k <= 4) is the same voice
GLIDE = 0.2  # T2 within 20 % of T1 too: one voice gliding inside the window cancels like two close pitches
FRAME_SCORE = 0.36  # frame threshold, chosen on the synthetic + composite set (docs/audio.md)
SEVERAL_SHARE = 0.06  # clip threshold on overlap_share: the lowest without a false "several" on the same set
MIN_VOICED_S = 0.5  # less voiced time than this: verdict none
PAIR_TOL = 0.07  # a pair continues when both periods are within 7 % of a neighbour's
_SOS = butter(6, 1500.0, fs=SAMPLE_RATE, output="sos")


@dataclass(frozen=True)
class VoiceOverlap:
    verdict: str  # "one" | "several" | "none"
    overlap_share: float  # overlapped / voiced frames
    voiced_s: float
    overlap_s: float
    detail: dict = field(default_factory=dict)  # per second and overlapped segments
    method: str = METHOD


def voices_heard(audio: np.ndarray, rate: int = SAMPLE_RATE, speech_probs: np.ndarray | None = None,
                 speech_rate: float = SAMPLE_RATE / 512) -> VoiceOverlap:
    """Verdict on a clip's mono audio. `speech_probs` (optional, e.g. silero-vad's per-chunk
    probabilities at `speech_rate` per second) restricts voiced time to speech: without it any periodic
    sound counts, and music (several notes) reads as several voices."""
    if rate != SAMPLE_RATE:
        from scipy.signal import resample_poly

        audio = resample_poly(np.asarray(audio, np.float64), SAMPLE_RATE, rate)
    f = frame_analysis(audio)
    voiced = f["voiced"].copy()
    if speech_probs is not None and len(speech_probs):
        idx = np.minimum((f["time_s"] * speech_rate).astype(int), len(speech_probs) - 1)
        voiced &= np.asarray(speech_probs)[idx] >= 0.5
    over = voiced & overlapped(f)
    voiced_s, overlap_s = voiced.sum() * HOP_S, over.sum() * HOP_S
    share = float(over.sum() / voiced.sum()) if voiced.any() else 0.0
    verdict = "none" if voiced_s < MIN_VOICED_S else "several" if share >= SEVERAL_SHARE else "one"
    return VoiceOverlap(verdict, round(share, 3), round(voiced_s, 2), round(overlap_s, 2),
                        _detail(f["time_s"], voiced, over, len(audio) / SAMPLE_RATE))


def frame_analysis(audio: np.ndarray) -> dict[str, np.ndarray]:
    """Per frame (centre `time_s`): loudness `db`, single-period aperiodicity `a1`, pair `score`,
    periods `t1`/`t2` in seconds (0 = none), `voiced`."""
    tmax, tmin, w, hop = int(RATE / FMIN), int(RATE / FMAX), int(WIN_S * RATE), int(HOP_S * RATE)
    x = sosfiltfilt(_SOS, np.asarray(audio, np.float64))[:: SAMPLE_RATE // RATE] if len(audio) > 64 else np.zeros(1)
    X = _frames(x, 2 * tmax + 3 + w, hop)
    d1, dp1, energy = _difference(X[:, tmax + 3 :], w)
    mins = _local_minima(dp1, tmin)
    order = np.argsort(mins, axis=1)[:, :CANDIDATES]
    a1 = np.minimum(mins[np.arange(len(X)), order[:, 0]], 1.0)
    best_single = np.maximum(d1[:, tmin:].min(axis=1), 1e-12)
    best = {"dz": np.full(len(X), np.inf), "t1": np.zeros(len(X)), "t2": np.zeros(len(X))}

    def keep(t1, t2, dz):
        better = dz < best["dz"]
        for key, val in (("dz", dz), ("t1", t1), ("t2", t2)):
            best[key] = np.where(better, val, best[key])

    safe = lambda t: np.where(t > 0, t, tmax / 2.0)  # noqa: E731  (a placeholder lag for frames without one)
    for k in range(order.shape[1]):
        ok = mins[np.arange(len(X)), order[:, k]] < 9
        t1 = np.where(ok, _refine(dp1, order[:, k] + 1), 0.0)
        t2, dz = _second_period(_comb(X, safe(t1), w, tmax), safe(t1), w, tmin)
        keep(t1, t2, np.where(ok, dz, np.inf))
        # one alternation: cancel the second period, re-find the first in what is left
        t1b, _ = _second_period(_comb(X, safe(t2), w, tmax), safe(t2), w, tmin)
        t2b, dzb = _second_period(_comb(X, safe(t1b), w, tmax), safe(t1b), w, tmin)
        keep(t1b, t2b, np.where((t1b > 0) & (t2 > 0), dzb, np.inf))
    score = np.minimum(best["dz"] / (2 * best_single), 1.0)
    db = 10 * np.log10(np.maximum(energy / w, 1e-12))
    loud = (db > db.max() - 30) & (db > -60)
    voiced = loud & ((a1 < 0.35) | (score < FRAME_SCORE))
    time_s = (np.arange(len(X)) * hop + tmax + 3 + w / 2) / RATE
    return {"time_s": time_s, "db": db, "a1": a1, "score": score, "t1": best["t1"] / RATE,
            "t2": best["t2"] / RATE, "voiced": voiced}


def overlapped(f: dict[str, np.ndarray]) -> np.ndarray:
    """Frames whose pair scores below FRAME_SCORE and continues in a neighbouring frame that does too."""
    low = (f["score"] < FRAME_SCORE) & (f["t2"] > 0)
    t1, t2 = f["t1"], f["t2"]
    close = lambda a, b: np.abs(a / np.maximum(b, 1e-9) - 1) < PAIR_TOL  # noqa: E731
    out = np.zeros(len(low), bool)
    for s in (1, -1):
        n1, n2, nl = np.roll(t1, s), np.roll(t2, s), np.roll(low, s)
        nl[0 if s == 1 else -1] = False
        out |= nl & ((close(t1, n1) & close(t2, n2)) | (close(t1, n2) & close(t2, n1)))
    return out & low


def _detail(time_s: np.ndarray, voiced: np.ndarray, over: np.ndarray, duration_s: float) -> dict:
    seconds = []
    for s in range(int(np.ceil(duration_s))):
        m = (time_s >= s) & (time_s < s + 1)
        seconds.append({"second": s, "voiced_s": round(float(voiced[m].sum() * HOP_S), 2),
                        "overlap_s": round(float(over[m].sum() * HOP_S), 2)})
    segments, start = [], None
    for i, o in enumerate(list(over) + [False]):
        if o and start is None:
            start = i
        elif not o and start is not None:
            if i - start >= 3:  # >= 60 ms
                segments.append([round(float(time_s[start] - HOP_S / 2), 2), round(float(time_s[i - 1] + HOP_S / 2), 2)])
            start = None
    return {"per_second": seconds, "segments": segments}


def _frames(a: np.ndarray, length: int, hop: int) -> np.ndarray:
    n = max(1, int(np.ceil(max(0, len(a) - length) / hop)) + 1)
    padded = np.zeros((n - 1) * hop + length)
    padded[: len(a)] = a
    return padded[np.arange(length)[None, :] + hop * np.arange(n)[:, None]]


def _difference(f: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """YIN's difference d(tau) of each row's last w samples against the samples tau before them, its
    cumulative-mean normalised form d', and the window energy."""
    n, lags = len(f), f.shape[1] - w
    nfft = sfft.next_fast_len(f.shape[1] + w, real=True)
    cc = sfft.irfft(sfft.rfft(f, nfft, axis=1) * np.conj(sfft.rfft(f[:, lags:], nfft, axis=1)), nfft, axis=1)
    taus = np.arange(lags + 1)
    c = np.concatenate([np.zeros((n, 1)), np.cumsum(f**2, axis=1)], axis=1)
    e0 = c[:, lags + w] - c[:, lags]
    d = np.maximum(e0[:, None] + c[:, lags + w - taus] - c[:, lags - taus] - 2 * cc[:, lags - taus], 0)
    dp = np.ones_like(d)
    dp[:, 1:] = d[:, 1:] / np.maximum(np.cumsum(d[:, 1:], axis=1) / taus[1:], 1e-12)
    return d, dp, e0


def _local_minima(dp: np.ndarray, tmin: int, mask: np.ndarray | None = None) -> np.ndarray:
    """d' at its local minima (column j = lag j + 1), 9 elsewhere."""
    c = dp[:, 1:-1]
    lm = (c < dp[:, :-2]) & (c <= dp[:, 2:])
    lm[:, : tmin - 1] = False
    if mask is not None:
        lm &= ~(mask[:, 1:-1] | mask[:, :-2] | mask[:, 2:])
    return np.where(lm, c, 9.0)


def _refine(dp: np.ndarray, j: np.ndarray) -> np.ndarray:
    r = np.arange(len(dp))
    a, b, c = dp[r, j - 1], dp[r, j], dp[r, j + 1]
    den = a - 2 * b + c
    ok = den > 1e-12
    return j + np.clip(np.where(ok, 0.5 * (a - c) / np.where(ok, den, 1.0), 0.0), -0.5, 0.5)


def _comb(X: np.ndarray, t: np.ndarray, w: int, tmax: int) -> np.ndarray:
    """x(t) - x(t - T) per row with a fractional T (4-tap Lagrange delay)."""
    rows = np.arange(len(X))[:, None]
    k = np.floor(t).astype(int)
    u = (t - k)[:, None]
    idx = np.arange(w + tmax)[None, :] + tmax + 2
    base = idx - k[:, None]
    c0, c1 = -u * (u - 1) * (u - 2) / 6, (u + 1) * (u - 1) * (u - 2) / 2
    c2, c3 = -(u + 1) * u * (u - 2) / 2, (u + 1) * u * (u - 1) / 6
    return X[rows, idx] - (c0 * X[rows, base + 1] + c1 * X[rows, base] + c2 * X[rows, base - 1] + c3 * X[rows, base - 2])


def _second_period(Y: np.ndarray, first: np.ndarray, w: int, tmin: int) -> tuple[np.ndarray, np.ndarray]:
    """Best period of the residual that is not harmonically tied to `first`, and the residual's energy left
    after cancelling it too (inf when none)."""
    d, dp, _ = _difference(Y, w)
    ratio = np.arange(dp.shape[1])[None, :] / first[:, None]
    mask = np.abs(ratio - 1) < GLIDE
    for k in (2, 3, 4):
        mask |= (np.abs(ratio / k - 1) < HARMONIC_TOL) | (np.abs(ratio * k - 1) < HARMONIC_TOL)
    mins = _local_minima(dp, tmin, mask)
    j = mins.argmin(axis=1) + 1
    none = mins.min(axis=1) >= 9
    t = np.where(none, 0.0, _refine(dp, j))
    dz = np.where(none, np.inf, d[np.arange(len(d)), j])
    return t, dz
