"""Answerers: the runner's view of a model. The MLLM client (OpenAI-compatible endpoints and local
transformers weights, with its call log and cache) is the only real one; tests use it too, against a
real HTTP server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class MllmAnswerer:
    """Adapter from the runner's `answer(...)` to `MllmClient.chat(...)`."""

    def __init__(self, client: Any, params: dict | None = None):
        self.client = client
        self.params = params  # request params for every call, e.g. {"temperature": 0}
        self.name = "mllm_client"

    def answer(self, model: str, prompt: str, frames: Sequence[np.ndarray] = (), audio: np.ndarray | None = None,
               params: dict | None = None):
        merged = {**(self.params or {}), **(params or {})} or None
        # the call-log row is committed by flush() (end of run): a reply never waits for the warehouse
        return self.client.chat(model, prompt, frames=list(frames), audio=audio, params=merged,
                                context={"stage": "evaluation"}, commit=False)

    def accepts_audio(self, model: str) -> bool:
        return bool(self.client.registry.get(model).accepts_audio)

    def warm_up(self, model: str) -> None:
        self.client.warm_up(model)

    def flush(self) -> None:
        self.client.flush()


def mllm_answerer(warehouse, registry, max_concurrency: int | None = None, params: dict | None = None,
                  max_attempts: int = 5) -> MllmAnswerer:
    """The client for `registry` (settings_table.model_registry), caching calls in `warehouse`; `max_attempts`
    per call, as for the Dagster `mllm` resource."""
    from hvbench_assets.core.mllm import MllmClient, RetryPolicy

    client = MllmClient(registry, warehouse, max_concurrency=max_concurrency,
                        retry=RetryPolicy(max_attempts=max_attempts))
    return MllmAnswerer(client, params)
