"""Fail-fast checks for hub-hosted weights: the libraries retry for ~20 s offline and then raise
misleading errors, so full backends check first and say exactly what is missing."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlparse


class ModelUnavailable(RuntimeError):
    """A full backend cannot run here; the message names the model and how to provide it."""


def hf_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hf_local_snapshot(repo_id: str, filename: str = "config.json") -> Path | None:
    """The cached snapshot folder of a Hugging Face repo when `filename` is in the local cache."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename, cache_dir=str(hf_cache_dir()))
    return Path(found).parent if isinstance(found, str) else None


def host_reachable(url: str, timeout_s: float = 3.0) -> bool:
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def require_hf_model(repo_id: str, filename: str = "config.json", offline: bool = False) -> str:
    """`repo_id` itself when it is a local folder, the local snapshot when cached, else the id when
    the hub answers; raises ModelUnavailable at once otherwise. `offline`: HF_HUB_OFFLINE is set (the
    caller reads it), so the hub is not asked."""
    if Path(repo_id).is_dir():
        return repo_id
    local = hf_local_snapshot(repo_id, filename)
    if local is not None:
        return str(local)
    from huggingface_hub import constants

    if offline:
        why = "HF_HUB_OFFLINE is set"
    elif not host_reachable(constants.ENDPOINT):
        why = f"the hub {constants.ENDPOINT} is unreachable"
    else:
        return repo_id
    raise ModelUnavailable(
        f"weights of {repo_id!r} are not in the local Hugging Face cache ({hf_cache_dir()}) and {why}. "
        f"Pre-seed them on a machine with network: `huggingface-cli download {repo_id}` with HF_HOME pointing "
        f"at the same cache, or set the model option to a local folder holding the files."
    )


def load_hf_pair(model_id: str, device: str, extractor_cls, model_cls, offline: bool = False) -> tuple:
    """(feature extractor, model in eval mode on `device`) from the local copy of a hub model;
    ModelUnavailable at once when the weights are not there (see require_hf_model)."""
    source = require_hf_model(model_id, offline=offline)
    return extractor_cls.from_pretrained(source), model_cls.from_pretrained(source).to(device).eval()


class HubModelPair:
    """What the full audio models from the Hugging Face hub share (AstTagger, Wav2Vec2Demographer; both dataclasses
    with model_id, device, hub_offline, model and _loaded fields): the device resolved at construction and recorded
    in `model`, and the (feature extractor, model) pair loaded once, on first use."""

    def __post_init__(self) -> None:
        from hvbench_assets.core.devices import provenance_text, resolve_device

        self.device = resolve_device(self.device, "the audio device (HVBENCH_AUDIO_DEVICE)")
        self.model = self.model or provenance_text(self.model_id, self.device)

    def hub_classes(self) -> tuple:
        """(feature extractor class, model class), imported when first needed."""
        raise NotImplementedError

    def load(self):
        if self._loaded is None:
            self._loaded = load_hf_pair(self.model_id, self.device, *self.hub_classes(), self.hub_offline)
        return self._loaded
