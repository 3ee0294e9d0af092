"""The `benchmark` resource: how the pool balances, how strict the leakage filter is, what the export takes,
and which benchmark name (partition) the sensor registers and the demo builds.

Environment: HVBENCH_BENCHMARK_NAME (default hvbench), HVBENCH_BENCHMARKS_DIR (shared with evaluation),
HVBENCH_POOL_TARGETS ("ER=200,HC=174"; default the paper's), HVBENCH_POOL_SCALE, HVBENCH_POOL_STRICT_RATIO,
HVBENCH_BLIND_MODELS ("a,b"; default the active answering models), HVBENCH_BLIND_ROTATIONS (all | none),
HVBENCH_LEAKAGE_ALPHA, HVBENCH_LEAKAGE_MAX_SHARE, HVBENCH_LEAKAGE_REPAIR_ROUNDS, HVBENCH_EXPORT_UNREVIEWED.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from hvbench_assets.core.benchmark.pool import PoolSettings, paper_targets, parse_targets
from hvbench_assets.defs.resources import env_or

_TRUE = ("1", "true", "yes", "on")


class BenchmarkSettings(dg.ConfigurableResource):
    name: str = "hvbench"  # the benchmark (partition of eval_benchmarks) the sensor registers and the demo builds
    benchmarks_dir: str = ""  # default <data_dir>/benchmarks (the evaluation stage looks there too)
    targets: str = ""  # per-task targets "ER=200,HC=174"; unset tasks keep the paper's default
    scale: float = 1.0  # multiplies every target
    strict_ratio: bool = False  # shrink HC/ER strata to the exact paper ratio (else each stratum up to its share)
    blind_models: str = ""  # comma-separated registry names; default: the active answering models
    blind_rotations: str = "all"  # all: every rotation of the options | none: the published order only
    leakage_alpha: float = 0.05  # one-sided binomial test level
    leakage_max_share: float = 0.75  # also removed when blind accuracy is above this share
    repair_rounds: int = 2  # blind-answered synthesis questions re-perturbed and re-tested up to this often (0: remove)
    include_unreviewed: bool = False  # export questions nobody reviewed yet (the manifest says so)

    def folder(self, data_dir: str, name: str | None = None) -> Path:
        return Path(self.benchmarks_dir or Path(data_dir) / "benchmarks") / (name or self.name)

    def pool(self) -> PoolSettings:
        return PoolSettings(targets={**paper_targets(), **parse_targets(self.targets)}, scale=self.scale,
                            strict_ratio=self.strict_ratio, include_unreviewed=self.include_unreviewed)

    def blind_model_names(self) -> list[str]:
        return [m.strip() for m in self.blind_models.split(",") if m.strip()]


def build_benchmark_resource() -> BenchmarkSettings:
    return BenchmarkSettings(
        name=env_or("HVBENCH_BENCHMARK_NAME", "hvbench"),
        benchmarks_dir=env_or("HVBENCH_BENCHMARKS_DIR", ""),
        targets=env_or("HVBENCH_POOL_TARGETS", ""),
        scale=env_or("HVBENCH_POOL_SCALE", 1.0),
        strict_ratio=os.environ.get("HVBENCH_POOL_STRICT_RATIO", "").strip().lower() in _TRUE,
        blind_models=env_or("HVBENCH_BLIND_MODELS", ""),
        blind_rotations=env_or("HVBENCH_BLIND_ROTATIONS", "all"),
        leakage_alpha=env_or("HVBENCH_LEAKAGE_ALPHA", 0.05),
        leakage_max_share=env_or("HVBENCH_LEAKAGE_MAX_SHARE", 0.75),
        repair_rounds=env_or("HVBENCH_LEAKAGE_REPAIR_ROUNDS", 2),
        include_unreviewed=os.environ.get("HVBENCH_EXPORT_UNREVIEWED", "").strip().lower() in _TRUE,
    )


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources={"benchmark": build_benchmark_resource()})
