"""Voice activity with silero-vad's bundled ONNX model, run through onnxruntime.

The package itself is not imported (its __init__ pulls torchaudio); only its data file is used."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.package_data import package_file

CHUNK = 512  # samples per VAD decision at 16 kHz (32 ms)
CONTEXT = 64  # samples of the previous chunk the model expects in front of each chunk
VAD_RATE = SAMPLE_RATE / CHUNK  # decisions per second (31.25)
MODEL_NAME = "silero-vad (bundled ONNX)"


def silero_onnx_path() -> Path:
    return package_file("silero_vad", "data", "silero_vad.onnx", what="silero-vad's ONNX model",
                        install="silero-vad --no-deps", error=ModelUnavailable)


@lru_cache(maxsize=1)
def _session():
    from hvbench_assets.core.devices import onnx_cpu_session

    return onnx_cpu_session(silero_onnx_path())


def speech_probabilities(audio: np.ndarray) -> np.ndarray:
    """Speech probability per 32 ms chunk (chunk i covers samples [512 i, 512 (i+1)))."""
    sess = _session()
    n = int(np.ceil(len(audio) / CHUNK))
    padded = np.zeros(n * CHUNK + CONTEXT, np.float32)
    padded[CONTEXT : CONTEXT + len(audio)] = audio
    state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(SAMPLE_RATE, dtype=np.int64)
    out = np.zeros(n, np.float32)
    for i in range(n):
        x = padded[i * CHUNK : (i + 1) * CHUNK + CONTEXT][None, :]
        prob, state = sess.run(None, {"input": x, "state": state, "sr": sr})
        out[i] = float(prob[0, 0])
    return out


def speech_segments(
    probs: np.ndarray, threshold: float = 0.5, min_speech_s: float = 0.25, min_gap_s: float = 0.3
) -> list[tuple[float, float]]:
    """[start_s, end_s] runs of speech: chunks above threshold, gaps shorter than min_gap_s bridged,
    runs shorter than min_speech_s dropped."""
    runs: list[list[float]] = []
    for i, p in enumerate(probs):
        if p < threshold:
            continue
        t0, t1 = i / VAD_RATE, (i + 1) / VAD_RATE
        if runs and t0 - runs[-1][1] < min_gap_s:
            runs[-1][1] = t1
        else:
            runs.append([t0, t1])
    return [(round(a, 3), round(b, 3)) for a, b in runs if b - a >= min_speech_s]
