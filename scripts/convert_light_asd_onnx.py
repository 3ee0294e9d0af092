"""Export the shipped Light-ASD checkpoint to ONNX, so the default install runs it with onnxruntime (no torch).

Run (needs the test extra: torch, and the `onnx` package the exporter uses):
    PYTHONPATH=. python scripts/convert_light_asd_onnx.py

Two graphs, the network's two halves as core/speakers/asd_batch.py runs them:
  light_asd_encoder.onnx: audio_mfcc (B, 4T, 13), faces (B, T, 112, 112) in 0-255 -> fused (B, T, 128)
  light_asd_head.onnx:    fused (B, T, 128) -> logit (B, T), the class-1 logit per frame (the GRU back-end)
Batch and time axes are dynamic. The script checks both against torch on random inputs of two lengths, writes
them to hvbench_assets/weights/ and updates their manifest entries (bytes, sha256, derived_by, derived_from)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.published_weights import MANIFEST, WEIGHTS_DIR, entry, sha256_of, weight_path  # noqa: E402
from hvbench_assets.core.speakers.light_asd import build_network, load_weights  # noqa: E402

OPSET = 17
PARTS = {
    "light_asd_encoder_onnx": ("light_asd_encoder.onnx", "Light-ASD audio + visual encoders, summed",
                               "audio_mfcc (B, 4T, 13) + faces (B, T, 112, 112), grayscale 0-255 -> fused (B, T, 128)"),
    "light_asd_head_onnx": ("light_asd_head.onnx", "Light-ASD back-end (forward/backward GRU + classifier)",
                            "fused (B, T, 128) from the encoder -> logit (B, T), class-1 logit per frame"),
}


def export(out_dir: Path = WEIGHTS_DIR) -> dict[str, Path]:
    import torch
    from torch import nn

    net = build_network()
    load_weights(net, weight_path("light_asd"))
    net.eval()

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, audio_mfcc, faces):
            return self.net.encode(audio_mfcc, faces)

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, fused):
            return self.net.head(fused)

    paths = {name: out_dir / spec[0] for name, spec in PARTS.items()}
    t = 30
    # the exporter restores the wrapper's train() flag on every child: wrappers must be in eval mode too
    torch.onnx.export(Encoder().eval(), (torch.randn(2, 4 * t, 13), torch.rand(2, t, 112, 112) * 255),
                      str(paths["light_asd_encoder_onnx"]), dynamo=False, opset_version=OPSET,
                      input_names=["audio_mfcc", "faces"], output_names=["fused"],
                      dynamic_axes={"audio_mfcc": {0: "batch", 1: "audio_rows"}, "faces": {0: "batch", 1: "frames"},
                                    "fused": {0: "batch", 1: "frames"}})
    torch.onnx.export(Head().eval(), (torch.randn(2, t, 128),), str(paths["light_asd_head_onnx"]), dynamo=False,
                      opset_version=OPSET, input_names=["fused"], output_names=["logit"],
                      dynamic_axes={"fused": {0: "batch", 1: "frames"}, "logit": {0: "batch", 1: "frames"}})
    check(net, paths)
    return paths


def check(net, paths: dict[str, Path]) -> None:
    import onnxruntime as ort
    import torch

    enc = ort.InferenceSession(str(paths["light_asd_encoder_onnx"]), providers=["CPUExecutionProvider"])
    head = ort.InferenceSession(str(paths["light_asd_head_onnx"]), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for b, t in ((1, 12), (3, 50)):
        audio = rng.standard_normal((b, 4 * t, 13)).astype(np.float32) * 10
        faces = rng.uniform(0, 255, (b, t, 112, 112)).astype(np.float32)
        fused = enc.run(None, {"audio_mfcc": audio, "faces": faces})[0]
        logit = head.run(None, {"fused": fused})[0]
        with torch.no_grad():
            ref = net(torch.from_numpy(audio), torch.from_numpy(faces)).numpy()
        err = float(np.abs(logit - ref).max())
        if err > 1e-4:
            raise SystemExit(f"ONNX export disagrees with torch by {err:.2e} at batch {b}, {t} frames")
        print(f"batch {b}, {t} frames: max |onnx - torch| = {err:.1e}")


def record(paths: dict[str, Path]) -> None:
    """Manifest entries for the derived files: the source's fields, plus how they were made."""
    doc = json.loads(MANIFEST.read_text())
    src = entry("light_asd")
    for name, (file, what, expects) in PARTS.items():
        doc["weights"][name] = {
            "file": file, "repository": src["repository"], "commit": src["commit"], "path": src["path"],
            "licence": src["licence"], "label": src["label"], "format": f"ONNX (opset {OPSET}): {what}",
            "expects": expects, "derived_by": "scripts/convert_light_asd_onnx.py", "derived_from": "light_asd",
            "bytes": paths[name].stat().st_size, "sha256": sha256_of(paths[name]),
        }
    MANIFEST.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    written = export()
    record(written)
    for p in written.values():
        print(f"wrote {p.relative_to(ROOT)} ({p.stat().st_size} bytes)")
