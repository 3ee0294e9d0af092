"""Which torch device (and dtype) a full backend runs on: one rule for every model.

`auto` is a CUDA GPU when torch sees one, else the CPU; `cpu`, `cuda` (= `cuda:0`) and `cuda:N` are taken as
asked, and asking for a GPU that is not there fails at once naming the setting, instead of a model quietly
running on the CPU. Resolved names are what rows and asset metadata record (`cuda:0`, never `auto`).
torch is imported only here and only when asked: without torch, `auto` is the CPU.
"""

from __future__ import annotations

import re

DEVICE_CHOICES = "auto, cpu, cuda or cuda:N"
_CUDA = re.compile(r"cuda(?::(\d+))?")


class DeviceUnavailable(RuntimeError):
    """A device was asked for that this machine does not have; the message names the setting."""


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def cuda_available() -> bool:
    torch = _torch()
    return bool(torch is not None and torch.cuda.is_available())


def resolve_device(setting: str | None = "auto", what: str = "the device setting") -> str:
    """'auto' | 'cpu' | 'cuda' | 'cuda:N' -> 'cpu' or 'cuda:N'. `what` names the setting in errors
    (e.g. 'HVBENCH_AUDIO_DEVICE')."""
    choice = (setting or "auto").strip().lower()
    if choice == "auto":
        return "cuda:0" if cuda_available() else "cpu"
    if choice == "cpu":
        return "cpu"
    match = _CUDA.fullmatch(choice)
    if not match:
        raise ValueError(f"{what} must be {DEVICE_CHOICES}, got {setting!r}")
    index = int(match.group(1) or 0)
    if not cuda_available():
        raise DeviceUnavailable(f"{what} is {setting!r} but torch sees no CUDA GPU here (a CPU-only torch build, no "
                                f"driver, or CUDA_VISIBLE_DEVICES hides it); set it to auto or cpu")
    count = _torch().cuda.device_count()
    if index >= count:
        raise DeviceUnavailable(f"{what} is {setting!r} but torch sees {count} CUDA GPU(s) (cuda:0..cuda:{count - 1})")
    return f"cuda:{index}"


def dtype_name(device: str, setting: str = "auto") -> str:
    """The weights' dtype for a large model (the local VLM): 'auto' is bfloat16 on a GPU that supports it,
    float16 on an older GPU, float32 on the CPU (half precision there is slow or unsupported)."""
    choice = (setting or "auto").strip().lower()
    if choice != "auto":
        if choice not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be auto, float32, bfloat16 or float16, got {setting!r}")
        return choice
    if not device.startswith("cuda"):
        return "float32"
    return "bfloat16" if _torch().cuda.is_bf16_supported() else "float16"


def torch_dtype(name: str):
    """The torch dtype object for a dtype_name() result."""
    return getattr(_torch(), name)


def provenance_text(model: str, device: str) -> str:
    """What rows record as their model when a backend runs on a chosen device: 'MODEL; device=cuda:0'."""
    return f"{model}; device={device}"



def blas_threads(n: int | None = 1):
    """A context limiting numpy's BLAS to `n` threads (None: as it is). The numpy networks (SSR-Net, mini-Xception,
    dlib's ResNet) run beside other steps on few cores, where a second OpenBLAS thread mostly spins waiting for the
    first: on the shared 2-core machine one thread took half the CPU seconds of two at the same wall time (L3's
    ensemble, 8 crops), and dlib's ResNet 28 ms a chip against 50-250 ms."""
    import contextlib

    if n is None:
        return contextlib.nullcontext()
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn; building one inspects every
        _BLAS = ThreadpoolController()  # loaded library, so once per process
    return _BLAS.limit(limits=n, user_api="blas")


_BLAS = None


def onnx_cpu_session(path, threads: int = 1):
    """An onnxruntime session on the CPU with `threads` intra-op threads and one inter-op thread: the offline
    models run beside other steps on few cores (and without a pool a forked process can use the session too)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
