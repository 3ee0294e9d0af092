"""One device rule for every full backend (core/devices.py): auto is this machine's CPU, a GPU when torch
sees one, and a GPU asked for but absent fails at once naming the setting."""

import sys

import pytest

from hvbench_assets.core.devices import (
    DeviceUnavailable,
    dtype_name,
    provenance_text,
    resolve_device,
)
from hvbench_assets_tests.fake_cuda import FakeCuda

torch = pytest.importorskip("torch")


def test_auto_is_the_cpu_on_this_machine():
    assert not torch.cuda.is_available()  # the test machine has a CPU-only torch
    assert resolve_device("auto") == resolve_device("") == resolve_device(None) == "cpu"
    assert resolve_device(" CPU ") == "cpu"
    assert dtype_name("cpu") == "float32"
    assert provenance_text("MIT/ast", "cpu") == "MIT/ast; device=cpu"


def test_a_gpu_asked_for_but_absent_fails_naming_the_setting():
    with pytest.raises(DeviceUnavailable, match="HVBENCH_AUDIO_DEVICE is 'cuda' but torch sees no CUDA GPU"):
        resolve_device("cuda", "HVBENCH_AUDIO_DEVICE")
    with pytest.raises(ValueError, match="HVBENCH_VISION_DEVICE must be auto, cpu, cuda or cuda:N, got 'gpu'"):
        resolve_device("gpu", "HVBENCH_VISION_DEVICE")


def test_auto_takes_the_gpu_when_torch_sees_one(monkeypatch):
    FakeCuda(monkeypatch, count=2)
    assert resolve_device("auto") == resolve_device("cuda") == "cuda:0"
    assert resolve_device("cuda:1") == "cuda:1" and resolve_device("cpu") == "cpu"
    with pytest.raises(DeviceUnavailable, match=r"sees 2 CUDA GPU\(s\)"):
        resolve_device("cuda:2")


@pytest.mark.parametrize("bf16, expected", [(True, "bfloat16"), (False, "float16")])
def test_half_precision_on_a_gpu_full_on_the_cpu(monkeypatch, bf16, expected):
    FakeCuda(monkeypatch, bf16=bf16)
    assert dtype_name("cuda:0") == expected and dtype_name("cpu") == "float32"
    assert dtype_name("cuda:0", "float32") == "float32" and dtype_name("cpu", "bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="dtype must be"):
        dtype_name("cpu", "int8")


def test_without_torch_auto_is_the_cpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert resolve_device("auto") == "cpu"
    with pytest.raises(DeviceUnavailable):
        resolve_device("cuda:0")
