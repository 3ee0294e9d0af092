"""The mini-Xception gender classifier of oarriaga/face_classification (MIT) in numpy, read from its Keras
.h5 model file (Keras 2.0, TensorFlow 'same' padding).

Two 3x3 convolutions, four residual modules (two separable convolutions + 3x3/2 max pooling, beside a 1x1/2
convolution), a 3x3 convolution to two classes, global average pooling and softmax. Input: 64x64 grey face
crops (cv2 RGB->GRAY of IMDB face crops) scaled to [-1, 1]; output class 1 = man, 0 = woman (IMDB labels)."""

from __future__ import annotations

import numpy as np

from hvbench_assets.core.vision.ssrnet import _bn, _conv, load_h5

INPUT_SIZE = 64


def _same(x: np.ndarray, k: int, stride: int, value: float) -> np.ndarray:
    """x padded as TensorFlow's 'same' pads for a k x k window at `stride` (the extra pixel goes after)."""
    pads = []
    for size in x.shape[1:3]:
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        pads.append((total // 2, total - total // 2))
    return np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=value)


def _separable(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    dk, pk = w[f"{name}/depthwise_kernel"][..., 0], w[f"{name}/pointwise_kernel"]
    xp, (h, wd) = _same(x, 3, 1, 0.0), x.shape[1:3]
    depth = sum(xp[:, i:i + h, j:j + wd] * dk[i, j] for i in range(3) for j in range(3))  # 9 shifted slices
    return depth @ pk[0, 0]


def _max_pool(x: np.ndarray) -> np.ndarray:
    xp = _same(x, 3, 2, -np.inf)
    h, wd = -(-x.shape[1] // 2), -(-x.shape[2] // 2)
    return np.max([xp[:, i:i + 2 * h:2, j:j + 2 * wd:2] for i in range(3) for j in range(3)], axis=0)


def _bias_free(w: dict) -> dict:
    """Keras stored no bias for bias-free convolutions; ssrnet._conv wants one."""
    out = dict(w)
    for key, k in w.items():
        if key.endswith("/kernel") and key.replace("/kernel", "/bias") not in w:
            out[key.replace("/kernel", "/bias")] = np.zeros(k.shape[-1], np.float32)
    return out


class MiniXception:
    """`predict(grey_faces)` -> the man probability of each 64x64 grey face (uint8 or float 0-255)."""

    def __init__(self, weights: dict[str, np.ndarray]):
        missing = [f"separable_conv2d_{i}/depthwise_kernel" for i in range(1, 9)
                   if f"separable_conv2d_{i}/depthwise_kernel" not in weights]
        if missing or "conv2d_7/kernel" not in weights:
            raise ValueError(f"not mini-Xception weights: missing {missing[:2] or ['conv2d_7/kernel']}")
        self.w = _bias_free(weights)

    @classmethod
    def from_h5(cls, path) -> "MiniXception":
        return cls(load_h5(path))

    def predict(self, faces: np.ndarray) -> np.ndarray:
        w = self.w
        x = np.asarray(faces, dtype=np.float32)
        if x.ndim == 3:
            x = x[..., None]
        if x.shape[1:] != (INPUT_SIZE, INPUT_SIZE, 1):
            raise ValueError(f"mini-Xception wants (n, {INPUT_SIZE}, {INPUT_SIZE}) grey faces, got {x.shape}")
        x = (x / 255.0 - 0.5) * 2.0
        for i in (1, 2):
            x = np.maximum(_bn(_conv(x, w, f"conv2d_{i}"), w, f"batch_normalization_{i}"), 0.0)
        for m in range(1, 5):
            residual = _bn(_conv(x[:, ::2, ::2], w, f"conv2d_{m + 2}"), w, f"batch_normalization_{3 * m}")
            y = np.maximum(_bn(_separable(x, w, f"separable_conv2d_{2 * m - 1}"), w,
                               f"batch_normalization_{3 * m + 1}"), 0.0)
            y = _bn(_separable(y, w, f"separable_conv2d_{2 * m}"), w, f"batch_normalization_{3 * m + 2}")
            x = _max_pool(y) + residual
        logits = _conv(_same(x, 3, 1, 0.0), w, "conv2d_7").mean(axis=(1, 2))
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (e[:, 1] / e.sum(axis=1)).astype(np.float64)
