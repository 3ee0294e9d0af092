"""The `mllm` resource: the model registry and one MllmClient per run, logging into the warehouse.

Settings (all optional; config/models.toml and its HVBENCH_MLLM_<NAME>_* overrides hold the rest):
HVBENCH_MODELS_FILE, HVBENCH_DESCRIBER_MODEL, HVBENCH_MLLM_MAX_CONCURRENCY, HVBENCH_MLLM_MAX_ATTEMPTS.
Keys are never resource fields: the registry names the variable holding each key.
"""

from __future__ import annotations

import dataclasses

import dagster as dg

from hvbench_assets.core.mllm import (
    MllmClient,
    ModelNotConfigured,
    ModelRegistry,
    ModelSpec,
    RetryPolicy,
    load_registry,
)
from hvbench_assets.core.synthesis.calls import ensemble_fingerprint
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.resources import env_or


class MllmResource(dg.ConfigurableResource):
    """Which models exist and how hard to push them."""

    models_file: str = ""  # default: config/models.toml (or HVBENCH_MODELS_FILE)
    describer_model: str = ""  # overrides HVBENCH_DESCRIBER_MODEL / the file's `describer`
    max_concurrency: int = 0  # in-flight requests per model and process; 0: each model's own limit
    max_attempts: int = 5
    backoff_s: float = 1.0  # first retry delay, doubled per attempt

    def registry(self) -> ModelRegistry:
        reg = load_registry(self.models_file or None)
        return dataclasses.replace(reg, describer_name=self.describer_model) if self.describer_model else reg

    def describer(self) -> ModelSpec:
        """Raises ModelNotConfigured naming what to set."""
        return self.registry().describer()

    def client(self, warehouse: Warehouse) -> MllmClient:
        return MllmClient(
            self.registry(), warehouse, max_concurrency=self.max_concurrency or None,
            retry=RetryPolicy(max_attempts=self.max_attempts, base_s=self.backoff_s),
        )


def configured_describer() -> ModelSpec | None:
    """The describer the configuration names now (None when none is usable). Read when definitions load: the
    code version of every asset it writes for names it."""
    try:
        return load_registry().describer()
    except (ModelNotConfigured, ValueError, OSError):
        return None


def configured_ensemble() -> str:
    """The answering models and weights the configuration names now ("unconfigured" when they are not usable),
    for the code versions of the descriptive task assets."""
    try:
        reg = load_registry()
        return ensemble_fingerprint(reg.active(), reg.min_answerers)
    except (ModelNotConfigured, ValueError, OSError):
        return "unconfigured"


def build_mllm_resource() -> MllmResource:
    return MllmResource(
        models_file=env_or("HVBENCH_MODELS_FILE", ""),
        describer_model=env_or("HVBENCH_DESCRIBER_MODEL", ""),
        max_concurrency=env_or("HVBENCH_MLLM_MAX_CONCURRENCY", 0),
        max_attempts=env_or("HVBENCH_MLLM_MAX_ATTEMPTS", 5),
    )


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources={"mllm": build_mllm_resource()})
