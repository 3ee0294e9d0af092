"""Which L7 method runs (`speaker_method`): combined | light_asd | lipsync, and the lip-sync fallback.

- light_asd: the Light-ASD network on the shipped weights (ONNX in the default install, torch in `full`);
- lipsync: the offline mouth-vs-voice scorer (lipsync.py), which needs no network;
- combined: Light-ASD gated and suppressed by the lip-sync evidence, anchored on a lip-sync speaker (combined.py);
- verified (default): Light-ASD kept where the time-shift test passes and no rival's lips beat it (combined.py,
  shift_test.py).
When the shipped Light-ASD weights cannot be loaded, the label falls back to lip-sync and every row says so
(`method`, `method_note`); a checkpoint the user configured explicitly that cannot be loaded is an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from hvbench_assets.core.audio.backends import AudioBackendConfig
from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.speakers.lipsync import LipSyncScorer

METHODS = ("verified", "combined", "light_asd", "lipsync")
DEFAULT_METHOD = "verified"  # best of the three on benchmarks/speaker_accuracy.py (docs/speakers.md)


def network(full: bool, weights: str = "", windows_s: tuple[float, ...] | None = None, device: str = "auto"):
    """The Light-ASD scorer of the profile: torch in `full`, onnxruntime otherwise."""
    from hvbench_assets.core.speakers import asd_runtime

    kw = {"window_s": tuple(windows_s)} if windows_s else {}
    if full:
        return asd_runtime.LightAsdScorer(weights_path=weights, device=device, **kw)
    return asd_runtime.OnnxLightAsdScorer(device=device, **kw)


@dataclass
class MethodScorer:
    """A clip scorer for `method`; loads its network on first use and falls back to lip-sync if that fails."""

    method: str = DEFAULT_METHOD
    full: bool = False
    weights: str = ""  # a user-configured checkpoint (full profile; offline runs the shipped ONNX); empty = shipped
    windows_s: tuple[float, ...] | None = None
    device: str = "auto"
    method_note: str | None = None
    _scorer: object | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown speaker_method {self.method!r}: use one of {', '.join(METHODS)}")

    @property
    def scorer(self):
        if self._scorer is None:
            self._scorer = self._build()
        return self._scorer

    def _build(self):
        if self.method == "lipsync":
            return LipSyncScorer()
        from hvbench_assets.core.speakers.combined import CombinedScorer, VerifiedScorer

        net = network(self.full, self.weights, self.windows_s, self.device)
        try:
            net.load()
        except (ModelUnavailable, ImportError, RuntimeError, OSError) as exc:
            if self.weights and self.full:  # only the torch network reads a configured checkpoint
                raise ModelUnavailable(f"Light-ASD checkpoint {self.weights} cannot be loaded: {exc}") from exc
            self.method_note = f"{self.method} unavailable, lip-sync used instead: {exc}"
            self.method = "lipsync"
            return LipSyncScorer()
        return {"verified": VerifiedScorer, "combined": CombinedScorer}.get(self.method, lambda n: n)(net)

    @property
    def backend(self) -> str:
        return self.scorer.backend

    @property
    def model(self) -> str:
        return self.scorer.model

    def prepare(self, frames_bgr, audio, fps: float):
        return self.scorer.prepare(frames_bgr, audio, fps)

    def score_placed(self, tracks, fps: float):
        return self.scorer.score_placed(tracks, fps)


@lru_cache(maxsize=16)
def build_scorer(cfg: AudioBackendConfig) -> MethodScorer:
    """The L7 scorer of an audio backend config, built once per process and configuration (like the audio
    backends): its network loads once."""
    return MethodScorer(cfg.speaker_method, cfg.full, cfg.light_asd_weights, cfg.light_asd_windows_s, cfg.asd_device)
