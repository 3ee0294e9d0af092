"""A CUDA GPU as torch would report it, on this CPU-only machine: `torch.cuda` says one is there, and every
`.to()` of a module or tensor that asks for a CUDA device is recorded and stays on the CPU (a dtype asked
for in the same call still applies). Tests check that the device choice reaches models and inputs; the
models still compute for real."""

from __future__ import annotations

import torch


class FakeCuda:
    def __init__(self, monkeypatch, count: int = 1, bf16: bool = True):
        self.requests: list[tuple[str, str]] = []  # (module | tensor, device asked for)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
        monkeypatch.setattr(torch.nn.Module, "to", self._recording(torch.nn.Module.to, "module"))
        monkeypatch.setattr(torch.Tensor, "to", self._recording(torch.Tensor.to, "tensor"))

    def _recording(self, original, kind: str):
        requests = self.requests

        def to(obj, *args, **kwargs):
            args = list(args)
            device = kwargs.get("device")
            if device is None and args and isinstance(args[0], (str, torch.device)):
                device = args[0]
            if device is None or torch.device(device).type != "cuda":
                return original(obj, *args, **kwargs)
            requests.append((kind, str(device)))
            if "device" in kwargs:
                kwargs.pop("device")
            else:
                args.pop(0)
            kwargs.pop("non_blocking", None)
            return original(obj, *args, **kwargs) if args or kwargs else obj

        return to

    def asked(self, kind: str) -> set[str]:
        return {device for k, device in self.requests if k == kind}
