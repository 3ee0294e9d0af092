"""SSR-Net (Yang et al., IJCAI 2018; shamangary/SSR-Net, Apache-2.0) in numpy, read from its Keras .h5 weights.

Two streams of four 3x3 conv blocks (relu + average pooling, tanh + max pooling) on a 64x64 BGR face with a 40 %
margin (pixels 0-255, as the IMDB-WIKI crops it was trained on were read by cv2), and a soft stagewise
regression over three stages of three bins. The same network gives age (`v=101`, years) or gender (`v=1`:
1 = male, 0 = female, the IMDB-WIKI convention). Layer names are Keras' automatic ones in construction order,
so they are checked against the file before use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

INPUT_SIZE = 64
STAGES = (3, 3, 3)
BN_EPS = 1e-3  # Keras' BatchNormalization default


def load_h5(path: Path) -> dict[str, np.ndarray]:
    """{layer name: {weight name: array}} flattened to 'layer/weight' (e.g. 'conv2d_1/kernel')."""
    import h5py

    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as f:
        root = f["model_weights"] if "model_weights" in f else f
        for layer in root:
            for name, ds in _datasets(root[layer]):
                out[f"{layer}/{name.split('/')[-1].split(':')[0]}"] = np.asarray(ds, dtype=np.float32)
    return out


def _datasets(group, prefix: str = ""):
    import h5py

    for k, v in group.items():
        if isinstance(v, h5py.Dataset):
            yield f"{prefix}{k}", v
        else:
            yield from _datasets(v, f"{prefix}{k}/")


def _conv(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    """'valid' convolution, NHWC; Keras kernel (kh, kw, cin, cout)."""
    k, b = w[f"{name}/kernel"], w[f"{name}/bias"]
    kh, kw = k.shape[:2]
    if kh == 1 and kw == 1:
        return x @ k[0, 0] + b
    n, h, wd, cin = x.shape
    h2, w2 = h - kh + 1, wd - kw + 1
    # im2col gathered shift by shift in the kernel's (kh, kw, cin) order: contiguous copies, one float32 matmul
    # (2-3x faster than reshaping a sliding-window view, whose copy walks the input in cin-last strides)
    cols = np.empty((n, h2, w2, kh, kw, cin), np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, :, i, j, :] = x[:, i:i + h2, j:j + w2, :]
    return (cols.reshape(n * h2 * w2, -1) @ k.reshape(-1, k.shape[3])).reshape(n, h2, w2, -1) + b


def _bn(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    g, beta = w[f"{name}/gamma"], w[f"{name}/beta"]
    mean, var = w[f"{name}/moving_mean"], w[f"{name}/moving_variance"]
    return (x - mean) * (g / np.sqrt(var + BN_EPS)) + beta


def _pool(x: np.ndarray, k: int, kind: str) -> np.ndarray:
    n, h, wd, c = x.shape
    h2, w2 = h // k, wd // k
    x = x[:, : h2 * k, : w2 * k].reshape(n, h2, k, w2, k, c)
    return x.max(axis=(2, 4)) if kind == "max" else x.mean(axis=(2, 4))


def _dense(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    return x @ w[f"{name}/kernel"] + w[f"{name}/bias"]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(x.shape[0], -1)  # NHWC order, as Keras' Flatten under channels_last


class SsrNet:
    """One SSR-Net: `predict(faces)` -> one value per 64x64x3 BGR face (float, 0-255)."""

    def __init__(self, weights: dict[str, np.ndarray], v: float):
        # the age network names its bin heads pred_age_stage<k>, the general (gender) one pred_stage<k>
        self.pred = "pred_age_stage" if "pred_age_stage1/kernel" in weights else "pred_stage"
        missing = [k for k in _expected_keys(self.pred) if k not in weights]
        if missing:
            raise ValueError(f"not SSR-Net 3-3-3 weights: {len(missing)} tensors missing, e.g. {missing[:3]}")
        self.w, self.v = weights, float(v)

    def predict(self, faces: np.ndarray) -> np.ndarray:
        w = self.w
        x = s = np.asarray(faces, dtype=np.float32)
        if x.ndim != 4 or x.shape[1:] != (INPUT_SIZE, INPUT_SIZE, 3):
            raise ValueError(f"SSR-Net wants (n, {INPUT_SIZE}, {INPUT_SIZE}, 3) faces, got {x.shape}")
        xs, ss = [], []
        for i in range(4):
            x = _relu(_bn(_conv(x, w, f"conv2d_{1 + i}"), w, f"batch_normalization_{1 + i}"))
            s = np.tanh(_bn(_conv(s, w, f"conv2d_{5 + i}"), w, f"batch_normalization_{5 + i}"))
            if i < 3:
                x, s = _pool(x, 2, "avg"), _pool(s, 2, "max")
            xs.append(x)
            ss.append(s)
        # stage 1 reads the last blocks, stage 2 the second pooled ones (pool 4), stage 3 the first (pool 8)
        heads = [(ss[3], xs[3], 1, "conv2d_9", "conv2d_10", ("dense_1", "dense_2", "dense_3"), 1),
                 (ss[1], xs[1], 4, "conv2d_11", "conv2d_12", ("dense_4", "dense_5", "dense_6"), 2),
                 (ss[0], xs[0], 8, "conv2d_13", "conv2d_14", ("dense_7", "dense_8", "dense_9"), 3)]
        preds, deltas, locals_ = [], [], []
        for s_in, x_in, pool, s_conv, x_conv, (s_mix, x_mix, feat), k in heads:
            sl = _relu(_conv(s_in, w, s_conv))
            xl = _relu(_conv(x_in, w, x_conv))
            if pool > 1:
                sl, xl = _pool(sl, pool, "max"), _pool(xl, pool, "avg")
            sl, xl = _flat(sl), _flat(xl)
            deltas.append(np.tanh(_dense(sl * xl, w, f"delta_s{k}"))[:, 0])
            f = _relu(_dense(_relu(_dense(sl, w, s_mix)) * _relu(_dense(xl, w, x_mix)), w, feat))
            preds.append(_relu(_dense(f, w, f"{self.pred}{k}")))
            locals_.append(np.tanh(_dense(f, w, f"local_delta_stage{k}")))
        out = np.zeros(len(faces), dtype=np.float64)
        denom = np.ones(len(faces), dtype=np.float64)
        for k, n_bins in enumerate(STAGES):
            denom = denom * n_bins * (1 + deltas[k])
            bins = np.arange(n_bins)[None, :] + locals_[k]
            out += (bins * preds[k]).sum(axis=1) / denom
        return out * self.v


def _expected_keys(pred: str) -> list[str]:
    keys = [f"conv2d_{i}/{p}" for i in range(1, 15) for p in ("kernel", "bias")]
    keys += [f"batch_normalization_{i}/{p}" for i in range(1, 9) for p in ("gamma", "beta", "moving_mean", "moving_variance")]
    keys += [f"dense_{i}/{p}" for i in range(1, 10) for p in ("kernel", "bias")]
    keys += [f"{n}{k}/{p}" for n in ("delta_s", pred, "local_delta_stage") for k in (1, 2, 3) for p in ("kernel", "bias")]
    return keys
