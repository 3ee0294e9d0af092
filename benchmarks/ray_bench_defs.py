"""Code location for the Ray part of benchmarks/scale.py: hvbench's definitions plus two jobs over the same few
per-clip assets, one executing its steps in the run's process (what the clip jobs do on Ray) and one with
dagster-ray's `ray_executor` (each step its own Ray job). Not part of the product: the measurement that chose the
first lives here."""

import sys
from pathlib import Path

import dagster as dg
from dagster_ray import ray_executor

from hvbench_assets import definitions as hvbench  # the module: a second @definitions name here would clash
from hvbench_assets.defs.partitions import videos_partitions

# the probe, one vision and one audio label, and what reads them: four steps, two of them GPU steps in `full`
SELECTION = dg.AssetSelection.assets("video_probe", "human_tracks", "person_count", "audio_tags")
PATH = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"

steps_in_run = dg.define_asset_job("bench_steps_in_run", selection=SELECTION, partitions_def=videos_partitions)
steps_on_ray = dg.define_asset_job(
    "bench_steps_on_ray", selection=SELECTION, partitions_def=videos_partitions,
    executor_def=ray_executor.configured({"ray": {"runtime_env": {"env_vars": {"PATH": PATH}}}}),
)


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions.merge(hvbench.defs(), dg.Definitions(jobs=[steps_in_run, steps_on_ray]))
