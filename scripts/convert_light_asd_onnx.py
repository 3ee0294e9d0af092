"""Export the shipped Light-ASD checkpoint to ONNX, so the default install runs it with onnxruntime (no torch).

Run (needs the test extra: torch, and the `onnx` package the exporter uses):
    PYTHONPATH=. python scripts/convert_light_asd_onnx.py

The network's two halves as core/speakers/asd_batch.py runs them:
  light_asd_encoder.onnx: audio_mfcc (B, 4T, 13), faces (B, T, 112, 112) in 0-255 -> fused (B, T, 128)
  light_asd_head.onnx:    fused (B, T, 128) -> logit (B, T), the class-1 logit per frame (the GRU back-end)
and the visual encoder in stages plus the audio encoder alone (STAGES), as core/speakers/asd_stages.py runs them.
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
# the visual encoder in stages and the audio encoder alone, as core/speakers/asd_stages.py runs them (window edges
# re-encoded only where they change); 5-D tensors are (B, C, T, H, W)
STAGES = {
    "light_asd_stage_full_onnx": ("light_asd_stage_full.onnx", "Light-ASD visual encoder, with blocks 2 and 3's spatial outputs",
                                  "faces (B, T, 112, 112) 0-255 -> visual (B, T, 128), s2 pair (B, 64, T, 28, 28), s3 pair (B, 128, T, 14, 14)"),
    "light_asd_stage_block1_onnx": ("light_asd_stage_block1.onnx", "Light-ASD visual block 1 and its pooling",
                                    "faces (B, T, 112, 112) 0-255 -> (B, 32, T, 28, 28)"),
    "light_asd_stage_spatial2_onnx": ("light_asd_stage_spatial2.onnx", "Light-ASD visual block 2, spatial convolutions",
                                      "(B, 32, T, 28, 28) -> s3, s5 (B, 64, T, 28, 28)"),
    "light_asd_stage_temporal2_onnx": ("light_asd_stage_temporal2.onnx", "Light-ASD visual block 2, temporal convolutions and pooling",
                                       "s3, s5 (B, 64, T, 28, 28) -> (B, 64, T, 14, 14)"),
    "light_asd_stage_spatial3_onnx": ("light_asd_stage_spatial3.onnx", "Light-ASD visual block 3, spatial convolutions",
                                      "(B, 64, T, 14, 14) -> s3, s5 (B, 128, T, 14, 14)"),
    "light_asd_stage_temporal3_onnx": ("light_asd_stage_temporal3.onnx", "Light-ASD visual block 3, temporal convolutions and pooling",
                                       "s3, s5 (B, 128, T, 14, 14) -> visual (B, T, 128)"),
    "light_asd_audio_onnx": ("light_asd_audio.onnx", "Light-ASD audio encoder", "audio_mfcc (B, 4T, 13) -> (B, T, 128)"),
}


def export_stages(net, paths: dict[str, Path]) -> None:
    import torch
    from torch import nn

    class Stage(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.net, self.fn = net, fn

        def forward(self, *xs):
            return self.fn(*xs)

    t, b = 30, 2
    five = {0: "batch", 2: "frames"}
    specs = {  # name: (function, example inputs, input names, output names, dynamic axes per tensor)
        "light_asd_stage_full_onnx": (net.full, (torch.rand(b, t, 112, 112) * 255,), ["faces"],
                                      ["visual", "s2_3", "s2_5", "s3_3", "s3_5"],
                                      {"faces": {0: "batch", 1: "frames"}, "visual": {0: "batch", 1: "frames"},
                                       "s2_3": five, "s2_5": five, "s3_3": five, "s3_5": five}),
        "light_asd_stage_block1_onnx": (lambda f: net.temporal(1, *net.spatial(1, f)), (torch.rand(b, t, 112, 112) * 255,),
                                        ["faces"], ["x"], {"faces": {0: "batch", 1: "frames"}, "x": five}),
        "light_asd_stage_spatial2_onnx": (lambda x: net.spatial(2, x), (torch.rand(b, 32, t, 28, 28),), ["x"], ["s3", "s5"],
                                          {"x": five, "s3": five, "s5": five}),
        "light_asd_stage_temporal2_onnx": (lambda p, q: net.temporal(2, p, q), (torch.rand(b, 64, t, 28, 28),) * 2,
                                           ["s3", "s5"], ["x"], {"s3": five, "s5": five, "x": five}),
        "light_asd_stage_spatial3_onnx": (lambda x: net.spatial(3, x), (torch.rand(b, 64, t, 14, 14),), ["x"], ["s3", "s5"],
                                          {"x": five, "s3": five, "s5": five}),
        "light_asd_stage_temporal3_onnx": (lambda p, q: net.temporal(3, p, q), (torch.rand(b, 128, t, 14, 14),) * 2,
                                           ["s3", "s5"], ["visual"], {"s3": five, "s5": five, "visual": {0: "batch", 1: "frames"}}),
        "light_asd_audio_onnx": (net.audio, (torch.randn(b, 4 * t, 13),), ["audio_mfcc"], ["audio"],
                                 {"audio_mfcc": {0: "batch", 1: "audio_rows"}, "audio": {0: "batch", 1: "frames"}}),
    }
    for name, (fn, example, ins, outs, axes) in specs.items():
        torch.onnx.export(Stage(fn).eval(), example, str(paths[name]), dynamo=False, opset_version=OPSET,
                          input_names=ins, output_names=outs, dynamic_axes=axes)


def export(out_dir: Path = WEIGHTS_DIR, halves: bool = True) -> dict[str, Path]:
    """Writes the graphs (`halves=False`: only the stages, the shipped halves kept as they are) and checks them."""
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
    if not halves:
        paths = {name: weight_path(name) for name in PARTS}
    # the exporter restores the wrapper's train() flag on every child: wrappers must be in eval mode too
    if halves:
        _export_halves(Encoder(), Head(), paths, t)
    paths |= {name: out_dir / spec[0] for name, spec in STAGES.items()}
    export_stages(net, paths)
    check(net, paths)
    return paths


def _export_halves(encoder, head, paths: dict[str, Path], t: int) -> None:
    import torch

    torch.onnx.export(encoder.eval(), (torch.randn(2, 4 * t, 13), torch.rand(2, t, 112, 112) * 255),
                      str(paths["light_asd_encoder_onnx"]), dynamo=False, opset_version=OPSET,
                      input_names=["audio_mfcc", "faces"], output_names=["fused"],
                      dynamic_axes={"audio_mfcc": {0: "batch", 1: "audio_rows"}, "faces": {0: "batch", 1: "frames"},
                                    "fused": {0: "batch", 1: "frames"}})
    torch.onnx.export(head.eval(), (torch.randn(2, t, 128),), str(paths["light_asd_head_onnx"]), dynamo=False,
                      opset_version=OPSET, input_names=["fused"], output_names=["logit"],
                      dynamic_axes={"fused": {0: "batch", 1: "frames"}, "logit": {0: "batch", 1: "frames"}})


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
    from hvbench_assets.core.speakers.asd_runtime import STAGE_WEIGHTS, OnnxAsdNet

    staged = OnnxAsdNet(paths["light_asd_encoder_onnx"], paths["light_asd_head_onnx"],
                        stages={key: paths[name] for key, name in STAGE_WEIGHTS.items()})
    for b, t in ((1, 12), (3, 50)):
        audio = rng.standard_normal((b, 4 * t, 13)).astype(np.float32) * 10
        faces = rng.uniform(0, 255, (b, t, 112, 112)).astype(np.float32)
        fused = staged.audio(audio) + staged.full(faces)[0]
        with torch.no_grad():
            ref = net.encode(torch.from_numpy(audio), torch.from_numpy(faces)).numpy()
        err = float(np.abs(fused - ref).max() / max(1.0, np.abs(ref).max()))
        if err > 1e-4:
            raise SystemExit(f"the staged ONNX encoder disagrees with torch by {err:.2e} at batch {b}, {t} frames")
        print(f"stages, batch {b}, {t} frames: max |onnx - torch| / max |torch| = {err:.1e}")


def record(paths: dict[str, Path]) -> None:
    """Manifest entries for the derived files: the source's fields, plus how they were made."""
    doc = json.loads(MANIFEST.read_text())
    src = entry("light_asd")
    for name, (file, what, expects) in (PARTS | STAGES).items():
        if name not in paths:
            continue
        doc["weights"][name] = {
            "file": file, "repository": src["repository"], "commit": src["commit"], "path": src["path"],
            "licence": src["licence"], "label": src["label"], "format": f"ONNX (opset {OPSET}): {what}",
            "expects": expects, "derived_by": "scripts/convert_light_asd_onnx.py", "derived_from": "light_asd",
            "bytes": paths[name].stat().st_size, "sha256": sha256_of(paths[name]),
        }
    MANIFEST.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    # --stages: only the staged graphs (the shipped halves and their manifest entries stay byte for byte)
    written = export(halves="--stages" not in sys.argv[1:])
    record({k: v for k, v in written.items() if "--stages" not in sys.argv[1:] or k in STAGES})
    for p in written.values():
        print(f"wrote {p.relative_to(ROOT)} ({p.stat().st_size} bytes)")
