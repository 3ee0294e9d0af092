"""Local weights through transformers (Qwen2.5-VL and other image-text-to-text models).

Same interface as the HTTP backend: it gets the JPEG frames the endpoint would get (so a local
and a served model see identical pixels) and returns a Reply. Weights are never downloaded here:
the registry entry's `local_path` must hold a folder prepared beforehand, e.g.

    huggingface-cli download Qwen/Qwen2.5-VL-3B-Instruct --local-dir /models/qwen25-vl-3b
    HVBENCH_MLLM_QWEN25_VL_LOCAL_LOCAL_PATH=/models/qwen25-vl-3b

Device: the entry's `device` (HVBENCH_MLLM_<NAME>_DEVICE, default auto: a CUDA GPU when torch sees one,
else the CPU) and `dtype` (auto: bfloat16, or float16 on GPUs without it, on CUDA; float32 on the CPU);
the model and every input tensor go to that device, and each reply's raw record names device and dtype.

Processor: `AutoProcessor` first (the model's own, which needs torchvision for its video part);
when that cannot be built (no torchvision, as on the CPU test machine) an image-only processor
does the same job for Qwen-style models from the tokenizer, the image processor (PIL backend)
and the chat template in the folder: frames are sent as images, never as a video input.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hvbench_assets.core.devices import DeviceUnavailable, dtype_name, torch_dtype
from hvbench_assets.core.mllm.backends import CallError, ConfigCallError, Payload, Reply
from hvbench_assets.core.mllm.registry import ModelSpec


class ImageOnlyProcessor:
    """Tokenizer + image processor + chat template, expanding each image placeholder into the
    number of vision tokens the image grid needs (what Qwen2-VL's processor does for images)."""

    def __init__(self, tokenizer, image_processor, chat_template: str | None):
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.chat_template = chat_template or getattr(tokenizer, "chat_template", None)
        self.image_token = getattr(tokenizer, "image_token", None) or "<|image_pad|>"

    @classmethod
    def from_pretrained(cls, path: str | Path) -> ImageOnlyProcessor:
        from transformers import AutoImageProcessor, AutoTokenizer

        path = Path(path)
        template = None
        if (path / "chat_template.jinja").exists():
            template = (path / "chat_template.jinja").read_text()
        elif (path / "chat_template.json").exists():
            template = json.loads((path / "chat_template.json").read_text()).get("chat_template")
        return cls(AutoTokenizer.from_pretrained(path), AutoImageProcessor.from_pretrained(path, backend="pil"), template)

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=False):
        return self.tokenizer.apply_chat_template(
            messages, chat_template=self.chat_template, add_generation_prompt=add_generation_prompt, tokenize=tokenize
        )

    def __call__(self, text: list[str], images=None, return_tensors="pt"):
        from transformers import BatchFeature

        data: dict[str, Any] = {}
        if images:
            data.update(self.image_processor(images=images, return_tensors=return_tensors))
            merge = self.image_processor.merge_size ** 2
            counts = iter(int(g.prod()) // merge for g in data["image_grid_thw"])
            expanded = []
            for t in text:
                parts = t.split(self.image_token)
                out = parts[0]
                for p in parts[1:]:
                    out += self.image_token * next(counts) + p
                expanded.append(out)
            text = expanded
        data.update(self.tokenizer(text, return_tensors=return_tensors, padding=True))
        return BatchFeature(data=data)

    def batch_decode(self, ids, skip_special_tokens=True):
        return self.tokenizer.batch_decode(ids, skip_special_tokens=skip_special_tokens)


class TransformersBackend:
    """Loads each local model once per process; generation is serialised per model."""

    def __init__(self) -> None:
        self._models: dict[str, tuple[Any, Any, str, str, threading.Lock]] = {}
        self._lock = threading.Lock()

    def load(self, spec: ModelSpec):
        with self._lock:
            if spec.name not in self._models:
                self._models[spec.name] = (*_load(spec), threading.Lock())
            return self._models[spec.name]

    def complete(self, spec: ModelSpec, payload: Payload) -> Reply:
        import torch

        model, processor, device, dtype, lock = self.load(spec)
        images = [cv2.cvtColor(cv2.imdecode(np.frombuffer(j, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
                  for j in payload.jpegs]
        content = [{"type": "image"} for _ in images] + [{"type": "text", "text": payload.prompt}]
        messages = ([{"role": "system", "content": [{"type": "text", "text": payload.system}]}] if payload.system else [])
        messages.append({"role": "user", "content": content})
        text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        # floating inputs (pixel values) also take the weights' dtype; token ids only move
        inputs = processor(text=[text], images=images or None, return_tensors="pt").to(device, getattr(torch, dtype))
        params = payload.params
        temperature = float(params.get("temperature", 0.0) or 0.0)
        gen = {"max_new_tokens": int(params.get("max_tokens") or params.get("max_completion_tokens") or 256),
               "do_sample": temperature > 0}
        if temperature > 0:
            gen.update(temperature=temperature, top_p=float(params.get("top_p", 1.0)))
        with lock, torch.inference_mode():
            if "seed" in params:
                torch.manual_seed(int(params["seed"]))
            try:
                out = model.generate(**inputs, **gen)
            except (RuntimeError, ValueError) as exc:  # out of memory, a sequence too long for the model
                raise CallError(f"generation failed: {type(exc).__name__}: {exc}") from exc
        new = out[:, inputs["input_ids"].shape[1]:]
        reply = processor.batch_decode(new, skip_special_tokens=True)[0].strip()
        if not reply:
            raise CallError(f"empty reply ({new.shape[1]} tokens generated, all special)")
        raw = {"generated_token_ids": new[0].tolist(), "text": reply, "prompt_text": text, "device": device,
               "dtype": dtype}
        return Reply(text=reply, tokens_in=int(inputs["input_ids"].shape[1]), tokens_out=int(new.shape[1]), raw=raw)


def _load(spec: ModelSpec):
    folder = Path(spec.local_path) if spec.local_path else None
    hint = (f"pre-seed the weights on a machine with network (`huggingface-cli download {spec.model_id} "
            f"--local-dir DIR`), copy DIR here and set {spec.env_prefix}_LOCAL_PATH=DIR")
    if folder is None or not (folder / "config.json").exists():
        raise ConfigCallError(f"model {spec.name}: no weights for {spec.model_id} at {folder or '(local_path unset)'}; {hint}")
    try:
        import torch  # noqa: F401
        from transformers import AutoModelForImageTextToText
    except ImportError as exc:
        raise ConfigCallError(f"model {spec.name}: the transformers backend needs torch and transformers ({exc})") from exc
    try:
        device = spec.torch_device()
        dtype = dtype_name(device, spec.dtype)
    except (DeviceUnavailable, ValueError) as exc:
        raise ConfigCallError(f"model {spec.name}: {exc}") from exc
    try:
        model = AutoModelForImageTextToText.from_pretrained(folder, dtype=torch_dtype(dtype))
    except (OSError, ValueError) as exc:
        raise ConfigCallError(f"model {spec.name}: cannot load weights from {folder} ({exc}); {hint}") from exc
    model.to(device).eval()
    return model, _load_processor(folder), device, dtype


def _load_processor(folder: Path):
    from transformers import AutoProcessor

    try:
        processor = AutoProcessor.from_pretrained(folder)
        if hasattr(processor, "image_processor"):
            return processor
    except (ImportError, ValueError, TypeError, AttributeError, OSError):
        pass  # the model's processor needs torchvision (video part): fall back to images only
    try:
        return ImageOnlyProcessor.from_pretrained(folder)
    except (OSError, ValueError) as exc:
        raise CallError(f"cannot build a processor from {folder}: {exc}") from exc
