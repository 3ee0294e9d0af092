"""YAMNet, Google's AudioSet event classifier (521 classes), from the shipped TFLite file that takes
log-mel patches (google-coral/coralmicro's yamnet_spectra_in.tflite), with the features of the YAMNet
reference re-implemented in numpy: 16 kHz mono, 25 ms periodic-Hann window / 10 ms hop, 512-point
STFT magnitudes, 64 HTK-mel bands 125-7500 Hz, log(mel + 0.001), patches of 96 frames hopped 48.

Checked against coralmicro's reference pair (models/yamnet_test_audio.bin, int16 PCM, and
yamnet_test_spectra.bin, the float32 96x64 patch): the same patch up to a constant gain of 4.1 in the
pair (log offset 1.41) with a residual of 0.024 (std), and the same top classes (tests/docs)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from hvbench_assets.core.audio import audioset
from hvbench_assets.core.audio.music import MusicResult, time_runs
from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.published_weights import provenance, weight_path

WINDOW = 400  # 25 ms
HOP = 160  # 10 ms
N_FFT = 512
N_MELS = 64
PATCH = 96  # frames: 0.96 s
PATCH_HOP = 48  # 0.48 s
PATCH_HOP_S = PATCH_HOP * HOP / SAMPLE_RATE
LOG_OFFSET = 0.001


@lru_cache(maxsize=1)
def mel_matrix(lo_hz: float = 125.0, hi_hz: float = 7500.0) -> np.ndarray:
    """(257, 64) HTK-mel triangles as TensorFlow's linear_to_mel_weight_matrix builds them (DC row zero)."""
    hz_to_mel = lambda f: 1127.0 * np.log1p(np.asarray(f, np.float64) / 700.0)  # noqa: E731
    bins = hz_to_mel(np.linspace(0.0, SAMPLE_RATE / 2, N_FFT // 2 + 1)[1:])[:, None]
    edges = np.linspace(hz_to_mel(lo_hz), hz_to_mel(hi_hz), N_MELS + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((bins - lower) / (center - lower), (upper - bins) / (upper - center)))
    return np.pad(weights, ((1, 0), (0, 0))).astype(np.float32)


def pad_waveform(audio: np.ndarray) -> np.ndarray:
    """Zero-pad as the reference does: at least one patch, and whole patch hops after it."""
    first = PATCH * HOP + WINDOW - HOP  # 15600 samples = 0.975 s
    hop = PATCH_HOP * HOP
    n = max(len(audio), first)
    n = first + int(np.ceil((n - first) / hop)) * hop
    out = np.zeros(n, np.float32)
    out[: len(audio)] = audio
    return out


def log_mel(audio: np.ndarray) -> np.ndarray:
    """(frames, 64) log-mel spectrogram of 16 kHz audio in [-1, 1]."""
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WINDOW) / WINDOW)).astype(np.float32)  # periodic Hann
    n = 1 + (len(audio) - WINDOW) // HOP
    frames = np.lib.stride_tricks.sliding_window_view(audio.astype(np.float32), WINDOW)[::HOP][:n]
    magnitude = np.abs(np.fft.rfft(frames * window, N_FFT, axis=1)).astype(np.float32)
    return np.log(magnitude @ mel_matrix() + LOG_OFFSET)


def patches(audio: np.ndarray) -> np.ndarray:
    """(n, 96, 64) log-mel patches; patch i starts at i * 0.48 s."""
    mel = log_mel(pad_waveform(audio))
    n = 1 + (len(mel) - PATCH) // PATCH_HOP
    return np.stack([mel[i * PATCH_HOP : i * PATCH_HOP + PATCH] for i in range(n)])


@lru_cache(maxsize=1)
def class_names() -> tuple[str, ...]:
    with weight_path("yamnet_class_map").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return tuple(r["display_name"] for r in sorted(rows, key=lambda r: int(r["index"])))


class YamnetModel:
    """The TFLite interpreter, loaded once; scores per patch."""

    def __init__(self) -> None:
        from ai_edge_litert.interpreter import Interpreter

        self.interpreter = Interpreter(model_path=str(weight_path("yamnet")), num_threads=1)
        self.interpreter.allocate_tensors()
        self._in = self.interpreter.get_input_details()[0]["index"]
        self._out = self.interpreter.get_output_details()[0]["index"]

    def patch_scores(self, batch: np.ndarray) -> np.ndarray:
        """(n, 521) class scores of (n, 96, 64) patches (the model takes one patch at a time)."""
        out = np.zeros((len(batch), len(class_names())), np.float32)
        for i, patch in enumerate(batch):
            self.interpreter.set_tensor(self._in, patch[None].astype(np.float32))
            self.interpreter.invoke()
            out[i] = self.interpreter.get_tensor(self._out)[0]
        return out

    def scores(self, audio: np.ndarray) -> np.ndarray:
        return self.patch_scores(patches(audio))


@lru_cache(maxsize=1)
def model() -> YamnetModel:
    return YamnetModel()


def step_scores(patch_scores: np.ndarray) -> np.ndarray:
    """Per 0.48 s step (step j = [0.48 j, 0.48 (j+1))): the mean of the two patches covering it (the
    first and the last step have one). n patches give n + 1 steps."""
    if len(patch_scores) == 0:
        return patch_scores
    padded = np.concatenate([patch_scores[:1], patch_scores, patch_scores[-1:]])
    return (padded[:-1] + padded[1:]) / 2


@dataclass
class YamnetMusicDetector:
    """Music and singing from YAMNet's AudioSet scores: a 0.48 s step is music when the best music or
    singing class (core.audio.audioset) of the patches covering it scores >= music_threshold."""

    music_threshold: float = 0.2  # 0.15-0.5 measured (benchmarks/music_detector.py): 0.2 best on its items
    min_segment_s: float = 0.96
    top_k: int = 5
    model_name: str = field(default_factory=lambda: f"YAMNet {provenance('yamnet')}")

    @property
    def model(self) -> str:
        return self.model_name

    def detect(self, audio: np.ndarray) -> MusicResult:
        if len(audio) < WINDOW:
            return MusicResult(0.0, 0.0, evidence={"method": "yamnet", "patches": 0})
        scores = model().scores(audio)
        groups = audioset.group_indices(class_names())
        music = scores[:, groups["music"]].max(1)
        singing = scores[:, groups["singing"]].max(1)
        steps_music = step_scores(music[:, None])[:, 0]
        steps_singing = step_scores(singing[:, None])[:, 0]
        duration = len(audio) / SAMPLE_RATE
        n_steps = max(1, int(np.ceil(duration / PATCH_HOP_S)))
        steps_music, steps_singing = steps_music[:n_steps], steps_singing[:n_steps]
        rate = 1 / PATCH_HOP_S
        segments = [(a, min(b, round(duration, 3))) for a, b in
                    time_runs(steps_music >= self.music_threshold, rate, self.min_segment_s)]
        frames = np.zeros(len(steps_music), bool)
        for a, b in segments:
            frames[int(round(a * rate)) : int(round(b * rate))] = True
        music_s = round(float(sum(b - a for a, b in segments)), 3)
        mean = scores.mean(0)
        best = np.argsort(mean)[::-1][: self.top_k]
        top = [{"label": class_names()[i], "score": round(float(mean[i]), 4)} for i in best]
        singing_s = round(float((steps_singing >= self.music_threshold).sum() * PATCH_HOP_S), 3)
        evidence = {"method": "yamnet", "patches": len(scores), "music_max": round(float(music.max()), 4),
                    "music_mean": round(float(music.mean()), 4), "singing_s": min(singing_s, round(duration, 3)),
                    "top_classes": top}
        return MusicResult(music_s, round(min(1.0, music_s / duration), 4), segments, frame_rate=rate, frames=frames,
                           evidence=evidence)
