"""Signal features on 16 kHz mono audio (numpy only): framing, loudness, spectral flatness, pitch."""

from __future__ import annotations

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE


def frames(audio: np.ndarray, frame_len: int, hop: int) -> np.ndarray:
    """(n, frame_len) view of the audio; the tail is zero-padded so every sample lands in a frame."""
    n = max(1, int(np.ceil(max(0, len(audio) - frame_len) / hop)) + 1)
    padded = np.zeros((n - 1) * hop + frame_len, np.float32)
    padded[: len(audio)] = audio
    idx = np.arange(frame_len)[None, :] + hop * np.arange(n)[:, None]
    return padded[idx]


def rms_db(audio: np.ndarray, frame_len: int = 512, hop: int = 512) -> np.ndarray:
    """Frame loudness in dBFS (a full-scale sine is -3 dB; digital silence is -100 dB)."""
    f = frames(audio, frame_len, hop)
    rms = np.sqrt(np.mean(f.astype(np.float64) ** 2, axis=1))
    return (20 * np.log10(np.maximum(rms, 1e-5))).astype(np.float32)


def spectral_flatness(audio: np.ndarray, frame_len: int = 512, hop: int = 512) -> np.ndarray:
    """Geometric / arithmetic mean of the power spectrum: ~0 for tones, ~1 for white noise."""
    f = frames(audio, frame_len, hop) * np.hanning(frame_len)
    power = np.abs(np.fft.rfft(f, axis=1)) ** 2 + 1e-12
    return (np.exp(np.mean(np.log(power), axis=1)) / np.mean(power, axis=1)).astype(np.float32)


def pitch_yin(
    audio: np.ndarray, sr: int = SAMPLE_RATE, fmin: float = 60.0, fmax: float = 600.0,
    frame_len: int = 1024, hop: int = 320, threshold: float = 0.15,
) -> tuple[np.ndarray, np.ndarray]:
    """YIN fundamental frequency per frame (Hz, 0 = unvoiced) and its periodicity (1 - d', 0..1).
    Frame times are i * hop / sr (20 ms steps by default)."""
    f = frames(audio, frame_len, hop).astype(np.float64)
    f -= f.mean(axis=1, keepdims=True)
    tau_min, tau_max = int(sr / fmax), min(int(sr / fmin), frame_len // 2)
    w = frame_len // 2
    spec = np.fft.rfft(f, n=2 * frame_len, axis=1)
    acf = np.fft.irfft(spec * np.conj(np.fft.rfft(f[:, :w], n=2 * frame_len, axis=1)), axis=1)[:, : tau_max + 1]
    energy = np.cumsum(f**2, axis=1)
    e0 = energy[:, w - 1]
    taus = np.arange(tau_max + 1)
    # energy of f[tau : tau + w] for every tau
    shifted = energy[:, taus + w - 1] - np.concatenate([np.zeros((len(f), 1)), energy[:, taus[1:] - 1]], axis=1)
    diff = e0[:, None] + shifted - 2 * acf
    diff[:, 0] = 0
    cum = np.cumsum(diff[:, 1:], axis=1) / np.arange(1, tau_max + 1)
    dprime = np.ones_like(diff)
    dprime[:, 1:] = diff[:, 1:] / np.maximum(cum, 1e-12)
    f0 = np.zeros(len(f))
    periodicity = np.zeros(len(f))
    for i, row in enumerate(dprime):
        seg = row[tau_min : tau_max + 1]
        below = np.nonzero(seg < threshold)[0]
        if not len(below):
            continue
        j = below[0]
        while j + 1 < len(seg) and seg[j + 1] < seg[j]:  # walk down to the local minimum
            j += 1
        tau = j + tau_min
        if 1 <= tau < tau_max:  # parabolic interpolation for sub-sample lag
            a, b, c = row[tau - 1], row[tau], row[tau + 1]
            denom = a - 2 * b + c
            tau = tau + (0.5 * (a - c) / denom if abs(denom) > 1e-12 else 0.0)
        f0[i] = sr / tau
        periodicity[i] = 1.0 - min(1.0, seg[j])
    return f0.astype(np.float32), periodicity.astype(np.float32)


def resample_track(values: np.ndarray, src_rate: float, times_s: np.ndarray) -> np.ndarray:
    """Values sampled at `src_rate` per second (value i at i / src_rate) read at `times_s` (linear)."""
    if not len(values):
        return np.zeros(len(times_s), np.float32)
    src_t = np.arange(len(values)) / src_rate
    return np.interp(times_s, src_t, values).astype(np.float32)
