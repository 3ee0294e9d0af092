"""dlib's face descriptor network (dlib_face_recognition_resnet_model_v1) in numpy.

The dlib wheel we use is built without BLAS, so `compute_face_descriptor` spends ~0.3 s per face. This module
reads the same weights from dlib's serialized file and runs the same ResNet as im2col + one float32 matmul per
convolution, which gives the same 128-d descriptor (to float32 rounding) an order of magnitude faster.

Input: the 150x150 RGB chip of `dlib.get_face_chip(rgb, shape, size=150, padding=0.25)`, i.e. the image
`compute_face_descriptor(rgb, shape)` feeds its network (num_jitters=0). Output: the raw 128-d fc output.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hvbench_assets.core import devices

CHIP_SIZE = 150

# The network, input first: (filters, blocks, first block downsamples) per level; the stem is
# con 32 7x7/2, affine, relu, max_pool 3x3/2; the head is avg_pool_everything and fc_no_bias 128.
LEVELS = ((32, 3, False), (64, 4, True), (128, 3, True), (256, 3, True), (256, 1, True))


def _expected_layers() -> list[tuple]:
    """The layer details the file must hold, in file order (dlib writes a network input first)."""
    out: list[tuple] = [("con_4", 32, 3, 7, 2), ("affine_",), ("relu_",), ("max_pool_2", 3, 3, 2, 2, 0, 0)]
    k = 32
    for n, blocks, down in LEVELS:
        for i in range(blocks):
            s = 2 if down and i == 0 else 1
            out += [("con_4", n, k, 3, s), ("affine_",), ("relu_",), ("con_4", n, n, 3, 1), ("affine_",)]
            if s == 2:
                out.append(("avg_pool_2", 2, 2, 2, 2, 0, 0))
            out += [("add_prev_",), ("relu_",)]
            k = n
    return out + [("avg_pool_2", 0, 0, 1, 1, 0, 0), ("fc_2", 128, 256)]


class _Reader:
    """dlib's serialization primitives over a bytes buffer."""

    def __init__(self, data: bytes, pos: int = 0):
        self.b, self.pos = data, pos

    def int(self) -> int:
        # pack_int: a control byte (byte count, 0x80 when negative), then little-endian bytes
        c = self.b[self.pos]
        n = c & 0x0F
        if n > 8 or self.pos + 1 + n > len(self.b):
            raise ValueError(f"bad integer at byte {self.pos}")
        v = int.from_bytes(self.b[self.pos + 1:self.pos + 1 + n], "little")
        self.pos += 1 + n
        return -v if c & 0x80 else v

    def str(self) -> str:
        n = self.int()
        if n > 64 or self.pos + n > len(self.b):
            raise ValueError(f"bad string at byte {self.pos}")
        self.pos += n
        return self.b[self.pos - n:self.pos].decode("latin-1")

    def float(self) -> float:
        # float_details: mantissa and exponent as two packed ints
        m = self.int()
        return m * 2.0 ** self.int()

    def tensor(self) -> np.ndarray:
        # version 2, num_samples, k, nr, nc, then raw little-endian float32
        if self.int() != 2:
            raise ValueError(f"bad tensor version at byte {self.pos}")
        shape = [self.int() for _ in range(4)]
        n = int(np.prod(shape))
        if n < 0 or self.pos + 4 * n > len(self.b):
            raise ValueError(f"tensor {shape} runs past the end of the file")
        a = np.frombuffer(self.b, "<f4", n, self.pos).astype(np.float32)
        self.pos += 4 * n
        return a

    def alias(self) -> list[int]:
        # an alias_tensor is only a shape (version 1) into its layer's params tensor
        if self.int() != 1:
            raise ValueError(f"bad alias tensor version at byte {self.pos}")
        return [self.int() for _ in range(4)]


INPUT_TAG = b"\x01\x15input_rgb_image_sized"


def _parse(data: bytes) -> tuple[np.ndarray, list[tuple]]:
    """Mean RGB of the input layer and the layers input first as (tag, fields, weights)."""
    start = data.find(INPUT_TAG)
    if not data.startswith(b"\x01\x01\x01\x0dloss_metric_") or start < 0:
        raise ValueError("not a dlib loss_metric network with an input_rgb_image_sized layer")
    r = _Reader(data, start)
    r.str()
    mean = np.array([r.float() for _ in range(3)], np.float32)
    if (r.int(), r.int()) != (CHIP_SIZE, CHIP_SIZE):
        raise ValueError("input layer is not 150x150")
    layers = []
    while r.pos < len(data):
        tag = r.str()
        if tag == "con_4":
            params = r.tensor()
            nf, nr, nc, sy, sx, py, px = (r.int() for _ in range(7))
            filters, _ = r.alias(), r.alias()
            [r.float() for _ in range(4)]  # learning-rate and weight-decay multipliers
            n = int(np.prod(filters))
            if params.size != n + nf or nr != nc or sy != sx or py != px or py != (nr // 2 if sy == 1 else 0):
                raise ValueError(f"unexpected con_ layer {filters} stride {sy} padding {py}")
            w, b = params[:n].reshape(filters), params[n:]
            layers.append(("con_4", (nf, filters[1], nr, sy), (w, b)))
        elif tag == "affine_":
            params = r.tensor()
            gamma, _ = r.alias(), r.alias()
            if r.int() != 0:
                raise ValueError("affine_ layer is not per channel")
            c = int(np.prod(gamma))
            if params.size != 2 * c:
                raise ValueError(f"affine_ params hold {params.size} values for {c} channels")
            layers.append(("affine_", (), (params[:c], params[c:])))
        elif tag in ("max_pool_2", "avg_pool_2"):
            layers.append((tag, tuple(r.int() for _ in range(6)), ()))
        elif tag in ("relu_", "add_prev_"):
            layers.append((tag, (), ()))
        elif tag == "fc_2":
            n_out, n_in = r.int(), r.int()
            params = r.tensor()
            r.alias(), r.alias()
            if r.int() != 1:
                raise ValueError("fc_ layer has a bias")
            [r.float() for _ in range(4)]
            if params.size != n_in * n_out:
                raise ValueError(f"fc_ params hold {params.size} values for {n_in}x{n_out}")
            layers.append(("fc_2", (n_out, n_in), (params.reshape(n_in, n_out),)))  # out = in @ W
        else:
            raise ValueError(f"unexpected layer tag {tag!r} at byte {r.pos}")
        # add_layer's own fields after the details: 3 bools as '0'/'1', 3 (empty) tensors; the layer
        # on the input also stores its sample expansion factor
        if any(c not in b"01" for c in data[r.pos:r.pos + 3]):
            raise ValueError(f"unexpected bytes after {tag} at byte {r.pos}")
        r.pos += 3
        for _ in range(3):
            r.tensor()
        if len(layers) == 1:
            r.int()
    return mean, layers


# ---- operations on NHWC float32 batches -------------------------------------------------------------------


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, k: int, stride: int, pad: int) -> np.ndarray:
    """im2col + one matmul. `w` is (k*k*C, N) in (row, col, channel) order to match the columns."""
    if pad:
        x = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    # a view of every k x k window as (n, y, x, row, col, channel); one reshape copies it into columns
    win = sliding_window_view(x, (k, k), axis=(1, 2))[:, ::stride, ::stride].transpose(0, 1, 2, 4, 5, 3)
    n, ho, wo = win.shape[:3]
    out = win.reshape(n * ho * wo, -1) @ w
    out += b
    return out.reshape(n, ho, wo, -1)


def _pool(x: np.ndarray, k: int, stride: int, op) -> np.ndarray:
    """k x k pooling with no padding (dlib's default for stride != 1): every window lies inside."""
    _, h, w, _ = x.shape
    ho, wo = 1 + (h - k) // stride, 1 + (w - k) // stride
    win = [x[:, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride]
           for i in range(k) for j in range(k)]
    return op(win)


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """dlib's add_prev: the sum over the larger shape, the smaller tensor zero-extended from index 0
    (the downsampling blocks add 2x more channels, and at 8 -> 3 vs 4 pixels a larger skip)."""
    if a.shape == b.shape:
        return a + b
    out = np.zeros(np.maximum(a.shape, b.shape), np.float32)
    out[tuple(slice(s) for s in a.shape)] += a
    out[tuple(slice(s) for s in b.shape)] += b
    return out


class DlibResnet:
    """The descriptor network of `dlib_face_recognition_resnet_model_v1.dat` with float32 numpy weights."""

    def __init__(self, path: str | Path, blas_threads: int | None = 1):
        """`blas_threads`: BLAS threads during a forward pass (None leaves BLAS as it is; core/devices.py)."""
        self.path = Path(path)
        try:
            mean, layers = _parse(self.path.read_bytes())
        except (ValueError, IndexError) as e:
            raise ValueError(f"{self.path} is not dlib's face recognition ResNet: {e}") from None
        got = [(t, *f) for t, f, _ in layers]
        want = _expected_layers()
        if [g[:len(w)] for g, w in zip(got, want)] != want or len(got) != len(want):
            bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g[:len(w)] != w), min(len(got), len(want)))
            raise ValueError(f"{self.path} is not dlib's face recognition ResNet: layer {bad} is "
                             f"{got[bad] if bad < len(got) else 'missing'}, expected "
                             f"{want[bad] if bad < len(want) else 'nothing'}")
        self.mean = mean
        # Fold each affine (a frozen batch norm) into the convolution before it: w*g, b*g + beta.
        convs = []
        for i, (tag, fields, weights) in enumerate(layers):
            if tag == "con_4":
                w, b = weights
                g, beta = layers[i + 1][2]
                nf, _, k, s = fields
                wm = (w * g[:, None, None, None]).transpose(2, 3, 1, 0).reshape(-1, nf)
                convs.append((np.ascontiguousarray(wm, np.float32), (b * g + beta).astype(np.float32), k, s,
                               k // 2 if s == 1 else 0))
        self._stem, self._blocks = convs[0], [convs[i:i + 2] for i in range(1, len(convs), 2)]
        self._fc = layers[-1][2][0]
        self._blas_threads = blas_threads

    def descriptors(self, chips: np.ndarray) -> np.ndarray:
        """(N, 128) float64 descriptors of N 150x150x3 uint8 RGB chips."""
        chips = np.asarray(chips)
        if chips.ndim == 3:
            chips = chips[None]
        if chips.shape[1:] != (CHIP_SIZE, CHIP_SIZE, 3) or chips.dtype != np.uint8:
            raise ValueError(f"expected uint8 RGB chips of {CHIP_SIZE}x{CHIP_SIZE}x3, got {chips.dtype} {chips.shape}")
        # a few chips per pass fill the small late matmuls; more only make the stem's columns outgrow the cache
        run = lambda: np.concatenate([self._forward(chips[i:i + 4]) for i in range(0, len(chips), 4)]
                                     or [np.zeros((0, 128))])
        with devices.blas_threads(self._blas_threads):
            return run()

    def _forward(self, chips: np.ndarray) -> np.ndarray:
        x = (chips.astype(np.float32) - self.mean) / np.float32(256)  # as dlib's input layer
        x = np.maximum(_conv(x, *self._stem), 0)
        x = _pool(x, 3, 2, lambda w: functools.reduce(np.maximum, w))
        for (c1, c2) in self._blocks:
            y = _conv(np.maximum(_conv(x, *c1), 0), *c2)
            if c1[3] == 2:  # residual_down: the skip is a 2x2/2 average of the block input
                x = _pool(x, 2, 2, lambda w: (w[0] + w[1] + w[2] + w[3]) / np.float32(4))
            x = np.maximum(_add(y, x), 0)
        return (x.mean(axis=(1, 2), dtype=np.float32) @ self._fc).astype(np.float64)

    def descriptor(self, chip: np.ndarray) -> np.ndarray:
        """The (128,) float64 descriptor of one 150x150x3 uint8 RGB chip (dlib.get_face_chip's output)."""
        return self.descriptors(chip[None])[0]
