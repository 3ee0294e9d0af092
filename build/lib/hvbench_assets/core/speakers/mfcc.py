"""MFCCs as Light-ASD was trained on (python_speech_features defaults: 25 ms windows every 10 ms,
26 mel filters, 13 coefficients, lifter 22, c0 replaced by log frame energy), in numpy."""

from __future__ import annotations

import numpy as np

from hvbench_assets.core.audio.features import frames
from hvbench_assets.core.media import SAMPLE_RATE

MFCC_RATE = 100.0  # frames per second


def _mel(hz):
    return 2595 * np.log10(1 + np.asarray(hz) / 700.0)


def _hz(mel):
    return 700 * (10 ** (np.asarray(mel) / 2595.0) - 1)


def _filterbank(nfilt: int, nfft: int, sr: int) -> np.ndarray:
    bins = np.floor((nfft + 1) * _hz(np.linspace(_mel(0), _mel(sr / 2), nfilt + 2)) / sr).astype(int)
    fb = np.zeros((nfilt, nfft // 2 + 1))
    for j in range(nfilt):
        a, b, c = bins[j], bins[j + 1], bins[j + 2]
        fb[j, a:b] = (np.arange(a, b) - a) / max(1, b - a)
        fb[j, b:c] = (c - np.arange(b, c)) / max(1, c - b)
    return fb


def _dct_ortho(n_in: int, n_out: int) -> np.ndarray:
    k = np.arange(n_out)[:, None]
    n = np.arange(n_in)[None, :]
    m = np.cos(np.pi * k * (2 * n + 1) / (2 * n_in)) * np.sqrt(2.0 / n_in)
    m[0] /= np.sqrt(2.0)
    return m


def mfcc(audio: np.ndarray, sr: int = SAMPLE_RATE, numcep: int = 13, nfilt: int = 26, nfft: int = 512,
         winlen: float = 0.025, winstep: float = 0.01, preemph: float = 0.97, ceplifter: int = 22) -> np.ndarray:
    """(n_frames, numcep) float32; frame i starts at i * winstep seconds."""
    x = np.append(audio[:1], audio[1:] - preemph * audio[:-1]).astype(np.float64) * 32768  # int16 scale, as trained
    fr = frames(x, int(round(winlen * sr)), int(round(winstep * sr)))
    power = np.abs(np.fft.rfft(fr, nfft, axis=1)) ** 2 / nfft
    energy = np.maximum(power.sum(axis=1), np.finfo(float).eps)
    feat = np.maximum(power @ _filterbank(nfilt, nfft, sr).T, np.finfo(float).eps)
    cep = np.log(feat) @ _dct_ortho(nfilt, numcep).T
    cep *= 1 + (ceplifter / 2.0) * np.sin(np.pi * np.arange(numcep) / ceplifter)
    cep[:, 0] = np.log(energy)
    return cep.astype(np.float32)


def mfcc_per_video_frame(audio: np.ndarray, n_frames: int, fps: float, per_frame: int = 4) -> np.ndarray:
    """(n_frames * per_frame, 13): MFCC rows read at the real times of each video frame.

    Light-ASD's audio encoder halves time twice, so it expects exactly 4 audio rows per video
    frame; at 25 fps that is the native 100 Hz MFCC rate. At any other rate the rows are
    interpolated at t = (i + k/4) / fps, so frame i always meets the audio of its own 1/fps span."""
    feats = mfcc(audio)
    t = (np.arange(n_frames * per_frame) / per_frame) / fps
    src_t = np.arange(len(feats)) / MFCC_RATE
    if not len(feats):
        return np.zeros((len(t), 13), np.float32)
    return np.stack([np.interp(t, src_t, feats[:, c]) for c in range(feats.shape[1])], axis=1).astype(np.float32)
