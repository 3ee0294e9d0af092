"""Helpers to run the ingest stage in tests against a temporary data folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg

from hvbench_assets.defs.ingest.assets import scene_clips, video_probe
from hvbench_assets.defs.ingest.checks import (
    clip_duration_in_paper_range,
    has_audio_stream,
    paper_resolution,
)
from hvbench_assets.defs.resources import MllmResource, SettingsResource, WarehouseResource


def resources_for(data_dir: Path, describer: str = "") -> dict:
    return {
        "settings": SettingsResource(data_dir=str(data_dir), inbox_settle_s=1.0),
        "warehouse": WarehouseResource(path=str(data_dir / "hvbench.duckdb")),
        "mllm": MllmResource(describer_model=describer),
    }


def age(path: Path, seconds: float = 120) -> None:
    """Make a file look settled (an mtime in the past)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def ingest_defs() -> dg.Definitions:
    """Ingest assets with resources from HVBENCH_* variables (subprocesses inherit the test's)."""
    from hvbench_assets.defs.resources import build_resources

    return dg.Definitions(
        assets=[scene_clips, video_probe],
        asset_checks=[clip_duration_in_paper_range, paper_resolution, has_audio_stream],
        jobs=[
            dg.define_asset_job("raw_job", selection=[scene_clips], executor_def=dg.in_process_executor),
            dg.define_asset_job("clip_job", selection=[video_probe], executor_def=dg.multiprocess_executor),
        ],
        resources=build_resources(),
    )


def raw_job():
    return ingest_defs().resolve_job_def("raw_job")


def clip_job():
    return ingest_defs().resolve_job_def("clip_job")


def run_partition(job_name: str, partition_key: str) -> bool:
    """One run of `job_name` for one partition on the DAGSTER_HOME instance (multiprocess executor)."""
    fn = {"raw_job": raw_job, "clip_job": clip_job}[job_name]
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(dg.reconstructable(fn), instance=instance, tags={"dagster/partition": partition_key})
        return result.success


def run_concurrently(job_name: str, partition_keys: list[str]) -> list[int]:
    """Start one OS process per partition at once, like a daemon launching queued runs; exit codes."""
    code = ("import sys; from hvbench_assets_tests.defs.ingest_harness import run_partition; "
            "sys.exit(0 if run_partition(sys.argv[1], sys.argv[2]) else 1)")
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", code, job_name, k], cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k in partition_keys]
    codes = []
    for p in procs:
        _, err = p.communicate(timeout=300)
        if p.returncode:
            print(err.decode(errors="replace")[-3000:])
        codes.append(p.returncode)
    return codes
