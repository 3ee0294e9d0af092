"""Light-ASD scorers: onnxruntime (default install, no torch) and torch (full profile), both on the shipped
weights unless a checkpoint path is given, both scoring a clip's tracks in batched passes (asd_batch.py).

Device: "auto" picks CUDA when present (torch: torch.cuda.is_available(); onnxruntime: the CUDA execution
provider), else CPU; the resolved device is recorded in the scorer's `model` text, so rows and provenance say
where the scores were computed."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.published_weights import WeightsUnavailable, provenance, weight_path
from hvbench_assets.core.speakers.asd_batch import lagged_window_scores, multi_window_scores
from hvbench_assets.core.speakers.light_asd import build_network, load_weights, prepare_faces
from hvbench_assets.core.speakers.mfcc import mfcc_per_video_frame
from hvbench_assets.core.devices import resolve_device

WINDOWS_S = (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6)  # the reference's multi-window average


def torch_device(requested: str = "auto") -> str:
    """The project's one device rule (core/devices.py): "auto" -> "cuda:0" when torch sees a GPU, else "cpu"."""
    return resolve_device(requested, "the Light-ASD device (HVBENCH_ASD_DEVICE)")


class TorchAsdNet:
    """encode/head of the torch network on numpy arrays; the model and every input on one device."""

    def __init__(self, net, device: str):
        self.device = device
        self.net = net.to(device).eval()
        if hasattr(net, "spatial"):  # the visual encoder in stages: asd_batch.py takes the staged path
            self.full = self._full
        if hasattr(net, "visual"):  # the encoders apart (LR-ASD): asd_batch.py encodes the faces once for all lags
            self.reach = net.reach
            self.visual = lambda faces: self._run(self.net.visual, faces)
            self.join = lambda heard, seen: np.concatenate([heard, seen], axis=-1)

    def _run(self, fn, *arrays):
        """fn on the arrays moved to the device; its tensor, or tuple of tensors, back as numpy."""
        import torch

        with torch.no_grad():
            out = fn(*(torch.from_numpy(np.ascontiguousarray(a)).to(self.device) for a in arrays))
            return tuple(t.cpu().numpy() for t in out) if isinstance(out, tuple) else out.cpu().numpy()

    def encode(self, audio, faces):
        return self._run(self.net.encode, audio, faces)

    def head(self, fused):
        return self._run(self.net.head, fused)

    # the visual encoder in stages (asd_stages.py)
    def _full(self, faces):
        return self._run(self.net.full, faces)

    def block1(self, faces):
        return self._run(lambda x: self.net.temporal(1, *self.net.spatial(1, x)), faces)

    def spatial(self, i, x):
        return self._run(lambda y: self.net.spatial(i, y), x)

    def temporal(self, i, s3, s5):
        return self._run(lambda a, b: self.net.temporal(i, a, b), s3, s5)

    def audio(self, mfcc):
        return self._run(self.net.audio, mfcc)


STAGE_WEIGHTS = {  # asd_stages.py's graphs: the visual encoder in stages, the audio encoder alone
    "full": "light_asd_stage_full_onnx", "block1": "light_asd_stage_block1_onnx",
    "spatial2": "light_asd_stage_spatial2_onnx", "temporal2": "light_asd_stage_temporal2_onnx",
    "spatial3": "light_asd_stage_spatial3_onnx", "temporal3": "light_asd_stage_temporal3_onnx",
    "audio": "light_asd_audio_onnx",
}


@functools.lru_cache(maxsize=1)
def _shared_cpu_arena() -> None:
    """Registers onnxruntime's process-wide CPU arena, which sessions opting in share (once per process)."""
    import onnxruntime as ort

    ort.create_and_register_allocator(ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0,
                                                        ort.OrtMemType.DEFAULT), None)


class OnnxAsdNet:
    """The exported halves (scripts/convert_light_asd_onnx.py) in onnxruntime; with `stages` (graph files by
    STAGE_WEIGHTS key) also the staged encoder asd_stages.py runs."""

    def __init__(self, encoder_path, head_path, device: str = "auto", threads: int = 1, stages: dict | None = None):
        import onnxruntime as ort

        providers = ["CPUExecutionProvider"]
        if device in ("", "auto", "cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        # idle pool threads sleep instead of spinning: L7 runs beside the run's other steps and other runs
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # One thread: L7 shares the cores with the run's other steps (and a batch's L7 with its helper process);
        # on a batch of 8 short clips two threads cost 1-1.3 more CPU seconds of 13-16. Without a pool, a process
        # forked after the session was built can use it too (onnxruntime's pool threads do not survive a fork).
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1

        def session(path):
            return ort.InferenceSession(str(path), opts, providers=providers)

        self.enc = session(encoder_path)
        self.hd = session(head_path)
        self.device = "cuda" if "CUDAExecutionProvider" in self.enc.get_providers() else "cpu"
        if stages:
            # one arena for the staged graphs (the process's shared CPU allocator), not one each: 7 arenas each kept
            # their largest call's buffers, 0.35 GB more at peak than the two halves
            _shared_cpu_arena()
            opts.add_session_config_entry("session.use_env_allocators", "1")
            self._stages = {key: session(path) for key, path in stages.items()}
            self.full = self._full  # asd_batch.py takes the staged path where `full` exists

    def encode(self, audio, faces):
        return self.enc.run(None, {"audio_mfcc": audio, "faces": faces})[0]

    def head(self, fused):
        return self.hd.run(None, {"fused": fused})[0]

    def _full(self, faces):
        return tuple(self._stages["full"].run(None, {"faces": faces}))

    def block1(self, faces):
        return self._stages["block1"].run(None, {"faces": faces})[0]

    def spatial(self, i, x):
        return tuple(self._stages[f"spatial{i}"].run(None, {"x": x}))

    def temporal(self, i, s3, s5):
        return self._stages[f"temporal{i}"].run(None, {"s3": s3, "s5": s5})[0]

    def audio(self, mfcc):
        return self._stages["audio"].run(None, {"audio_mfcc": mfcc})[0]


@dataclass
class _AsdScorer:
    """Shared by both runtimes: prepare keeps 112x112 grayscale crops (12.5 kB a frame) and the audio."""

    window_s: tuple[float, ...] = WINDOWS_S
    device: str = "auto"
    _net: object | None = field(default=None, repr=False)

    def _build(self):  # -> encode/head object
        raise NotImplementedError

    def load(self):
        if self._net is None:
            self._net = self._build()
        return self._net

    def prepare(self, frames_bgr, audio: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
        self.load()  # fail on missing weights before any decoding
        return prepare_faces(frames_bgr), audio

    def score_placed(self, tracks, fps: float) -> list[np.ndarray]:
        """Each track scored against the sound on its own (the network does not compare faces)."""
        return self.score_prepared([t.signals for t in tracks], fps)

    def score_prepared(self, prepared: Sequence[tuple[np.ndarray, np.ndarray]], fps: float) -> list[np.ndarray]:
        items = [(faces, mfcc_per_video_frame(audio, len(faces), fps)) for faces, audio in prepared]
        return multi_window_scores(self.load(), items, fps, self.window_s)

    def score_lagged(self, prepared: Sequence[tuple[np.ndarray, np.ndarray]], fps: float,
                     lags: Sequence[int]) -> list[np.ndarray]:
        """Per track (len(lags), T): the scores with the sound shifted by each lag in frames (0 = as heard)."""
        items = [(faces, mfcc_per_video_frame(audio, len(faces), fps)) for faces, audio in prepared]
        return lagged_window_scores(self.load(), items, fps, self.window_s, lags)

    def score(self, frames_bgr, audio: np.ndarray, fps: float) -> np.ndarray:
        return self.score_prepared([self.prepare(frames_bgr, audio, fps)], fps)[0]

    @property
    def resolved_device(self) -> str:
        return self.load().device


@dataclass
class OnnxLightAsdScorer(_AsdScorer):
    """Default L7 network: the shipped Light-ASD weights exported to ONNX, in onnxruntime."""

    backend: str = "offline"

    def _build(self):
        try:
            return OnnxAsdNet(weight_path("light_asd_encoder_onnx"), weight_path("light_asd_head_onnx"), self.device,
                              stages={key: weight_path(name) for key, name in STAGE_WEIGHTS.items()})
        except WeightsUnavailable as exc:
            raise ModelUnavailable(str(exc)) from exc

    @property
    def model(self) -> str:
        return (f"Light-ASD (ONNX, onnxruntime on {self.resolved_device}) from "
                f"{provenance('light_asd')}, mean over {len(self.window_s)} windows")


@dataclass
class LightAsdScorer(_AsdScorer):
    """Full-profile L7 network in torch: the shipped checkpoint, or the one at `weights_path`."""

    weights_path: str = ""
    backend: str = "full"

    def _build(self):
        net = build_network()
        try:
            load_weights(net, self.weights_path or weight_path("light_asd"))
        except WeightsUnavailable as exc:
            raise ModelUnavailable(str(exc)) from exc
        return TorchAsdNet(net, torch_device(self.device))

    @property
    def model(self) -> str:
        source = self.weights_path or provenance("light_asd")
        return f"Light-ASD (torch on {self.resolved_device}) from {source}, mean over {len(self.window_s)} windows"


@dataclass
class LrAsdScorer(_AsdScorer):
    """LR-ASD (lr_asd.py) in torch on a checkpoint the user supplies (`weight/pretrain_AVA.model` of
    Junhua-Liao/LR-ASD, MIT): measured beside Light-ASD by benchmarks/speaker_accuracy.py --lr-asd, not shipped."""

    weights_path: str = ""
    backend: str = "full"

    def _build(self):
        from hvbench_assets.core.speakers.lr_asd import build_network as build_lr, load_weights as load_lr

        net = build_lr()
        load_lr(net, self.weights_path)
        return TorchAsdNet(net, torch_device(self.device))

    @property
    def model(self) -> str:
        return f"LR-ASD (torch on {self.resolved_device}) from {self.weights_path}, mean over {len(self.window_s)} windows"
