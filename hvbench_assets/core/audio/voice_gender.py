"""Adult voice gender from x4nth055/gender-recognition-by-voice's Keras MLP (shipped results/model.h5),
run in numpy. Its input is what the repository computed with librosa defaults: the audio loaded at
22,050 Hz, a 128-band mel power spectrogram (2048-point periodic-Hann STFT, hop 512, centred with zero
padding, Slaney mel scale and area normalisation, 0 - 11,025 Hz), averaged over time. Reproduced here
without librosa (tests compare with values computed by librosa 0.9.2); the 16 kHz clip audio is first
resampled to 22,050 Hz, so the bands above 8 kHz stay empty where Common Voice's mp3s had some energy.

The network: Dense 256 (linear) - 256 - 128 - 128 - 64 (ReLU) - 1 (sigmoid, 1 = male); dropout is
training-only. It was trained on Common Voice adults and has no child class."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.published_weights import weight_path

MLP_RATE = 22050
N_FFT = 2048
HOP = 512
N_MELS = 128


def slaney_hz_to_mel(hz: np.ndarray) -> np.ndarray:
    hz = np.asarray(hz, np.float64)
    linear = hz / (200.0 / 3)
    log_step = np.log(6.4) / 27.0
    return np.where(hz >= 1000.0, 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / log_step, linear)


def slaney_mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, np.float64)
    log_step = np.log(6.4) / 27.0
    return np.where(mel >= 15.0, 1000.0 * np.exp(log_step * (mel - 15.0)), mel * (200.0 / 3))


@lru_cache(maxsize=2)
def mel_filters(sr: int = MLP_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """(n_mels, 1 + n_fft // 2) as librosa.filters.mel(sr, n_fft, n_mels) builds it (htk=False, norm='slaney')."""
    fft_hz = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_hz = slaney_mel_to_hz(np.linspace(slaney_hz_to_mel(0.0), slaney_hz_to_mel(sr / 2), n_mels + 2))
    width = np.diff(mel_hz)
    ramps = mel_hz[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / width[:-1, None]
    upper = ramps[2:] / width[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_hz[2:] - mel_hz[:-2]))[:, None]
    return weights.astype(np.float32)


def to_mlp_rate(audio: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(MLP_RATE, sr)
    return resample_poly(audio.astype(np.float64), MLP_RATE // g, sr // g).astype(np.float32)


def mel_mean(audio_22k: np.ndarray) -> np.ndarray:
    """The 128 time-averaged mel powers of 22,050 Hz audio (librosa.feature.melspectrogram(y, sr).mean(1))."""
    padded = np.pad(audio_22k.astype(np.float32), N_FFT // 2)
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)
    n = 1 + (len(padded) - N_FFT) // HOP
    total = np.zeros(N_MELS, np.float64)
    for start in range(0, n, 256):  # blocks bound the memory of long clips
        idx = np.arange(start, min(n, start + 256))
        frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[idx * HOP] * window
        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
        total += (power.astype(np.float32) @ mel_filters().T).sum(0)
    return (total / n).astype(np.float32)


@lru_cache(maxsize=1)
def mlp_layers() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """(kernel, bias) of the six Dense layers, read from the shipped Keras HDF5 file."""
    import h5py

    with h5py.File(weight_path("voice_gender"), "r") as f:
        group = f["model_weights"]
        names = [n.decode() if isinstance(n, bytes) else n for n in group.attrs["layer_names"]]
        dense = [n for n in names if n.startswith("dense")]
        return tuple((group[n][n]["kernel:0"][()], group[n][n]["bias:0"][()]) for n in dense)


def male_probability(features: np.ndarray) -> float:
    """The MLP's sigmoid output for one 128-vector (1 = male)."""
    x = np.asarray(features, np.float64)[None, :]
    layers = mlp_layers()
    for i, (kernel, bias) in enumerate(layers):
        x = x @ kernel + bias
        if 0 < i < len(layers) - 1:  # the first Dense is linear, the last sigmoid
            x = np.maximum(x, 0.0)
    return float(1.0 / (1.0 + np.exp(-np.clip(x[0, 0], -60, 60))))


def male_probability_of(audio: np.ndarray, sr: int = SAMPLE_RATE, peak: float = 0.5) -> float:
    """The MLP's male probability of speech audio, scaled to `peak` first: the first layer is linear in
    the mel powers, so the level moves the answer (raw levels: 0.79 adult accuracy, peak 0.5 as the
    repository normalises its recordings: 0.91, benchmarks/voice_gender.py)."""
    top = float(np.max(np.abs(audio))) if len(audio) else 0.0
    scaled = audio * (peak / top) if top > 0 else audio
    return male_probability(mel_mean(to_mlp_rate(scaled, sr)))
