"""Real Dagster runs of the ingest and per-clip jobs against a data root and warehouse chosen by environment
variables, as a node of a cluster would run them: the inbox sensor, `raw_video_job`, the clip sensor and the
per-clip job, on the DAGSTER_HOME instance."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.core.warehouse import Warehouse


def use_data_root(monkeypatch, data: Path, warehouse: str | None = None) -> None:
    """Point every setting at `data` (the warehouse defaults to a DuckDB file inside it)."""
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(data))
    monkeypatch.setenv("HVBENCH_WAREHOUSE", warehouse or str(data / "hvbench.duckdb"))
    monkeypatch.delenv("HVBENCH_INBOX_DIR", raising=False)


def talking_clip(path: Path, seconds: float = 4.0) -> Path:
    """Two people, the left one talking (espeak-ng speech when installed): faces for L1's crop clips and, over 8 s,
    an AVAD question with a rendered question video."""
    from hvbench_assets.demo.main import _speech
    from hvbench_assets.core.media import write_video
    from hvbench_assets.demo.samples import two_people_talking

    speech = _speech("Hello, I am the person on the left and I am talking to you now.", seconds)
    frames = two_people_talking(seconds, speech)
    if frames is None:
        msg = "scikit-image (the `demo` extra) is not installed: no sample photographs for a clip with faces"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, frames, fps=25, audio=speech)
    old = time.time() - 3600  # complete: let it count as settled for the inbox sensor
    os.utime(path, (old, old))
    return path


def _resources() -> dict:
    from hvbench_assets.defs.resources import build_resources

    return build_resources()


def _apply(result, instance) -> list[dg.RunRequest]:
    for req in getattr(result, "dynamic_partitions_requests", None) or []:
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return list(getattr(result, "run_requests", None) or [])


def ingest_inbox(instance: dg.DagsterInstance) -> list[str]:
    """Two inbox-sensor ticks and `raw_video_job` for each file they request; the raw keys."""
    from hvbench_assets.demo.main import raw_video_job
    from hvbench_assets.defs.ingest.sensors import inbox_sensor

    cursor, requests = None, []
    for _ in range(2):  # the sensor wants to see a file unchanged twice
        result = inbox_sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=_resources()))
        cursor = result.cursor
        requests += _apply(result, instance)
    for req in requests:
        assert execute(raw_video_job, instance, req.partition_key, req.tags), f"raw_video_job {req.partition_key}"
    return [r.partition_key for r in requests]


def new_clips(instance: dg.DagsterInstance) -> list[str]:
    """The clip sensor's requests (their partitions added, as the daemon does)."""
    from hvbench_assets.defs.ingest.sensors import clip_sensor

    requests = _apply(clip_sensor(dg.build_sensor_context(instance=instance, resources=_resources())), instance)
    return [key for r in requests for key in request_keys(r, instance)]


def request_keys(request: dg.RunRequest, instance: dg.DagsterInstance) -> list[str]:
    """The clips of one clip-sensor request: its partition, or every partition of its key range (a batch)."""
    if request.partition_key:
        return [request.partition_key]
    keys = instance.get_dynamic_partitions("videos")
    first, last = (keys.index(request.tags[f"dagster/asset_partition_range_{end}"]) for end in ("start", "end"))
    return keys[first:last + 1]


def execute(job_fn, instance: dg.DagsterInstance, partition: str, tags: dict | None = None,
            assets: Iterable[str] | None = None) -> bool:
    """One run of `job_fn` (a reconstructable job function) for `partition`, optionally only `assets` of it."""
    selection = [dg.AssetKey(a) for a in assets] if assets is not None else None
    result = dg.execute_job(dg.reconstructable(job_fn), instance=instance, asset_selection=selection,
                            tags={**(tags or {}), "dagster/partition": partition})
    return result.success


def string_values(wh: Warehouse) -> dict[tuple[str, str], list[str]]:
    """Every non-null value of every text-like column (VARCHAR, JSON, lists as text) of every table."""
    out = {}
    for table in wh.table_names():
        cols = wh.query("SELECT column_name, data_type FROM information_schema.columns "
                        "WHERE table_name = ? AND table_catalog = current_database()", [table])
        for c in cols:
            kind = c["data_type"].upper()
            if kind in ("VARCHAR", "JSON") or kind.endswith("[]") or kind.startswith(("STRUCT", "MAP")):
                name = c["column_name"]
                values = [r["v"] for r in wh.query(f'SELECT CAST("{name}" AS VARCHAR) AS v FROM "{table}" '
                                                   f'WHERE "{name}" IS NOT NULL')]
                out[(table, name)] = values
    return out


def values_naming(wh: Warehouse, *folders: Path) -> list[tuple[str, str, str]]:
    """(table, column, value) of every stored text that names one of `folders` (as given or links resolved)."""
    needles = {str(f) for f in folders} | {str(Path(f).resolve()) for f in folders}
    return [(t, c, v) for (t, c), values in string_values(wh).items() for v in values
            if any(n in v for n in needles)]


def latest_metadata(instance: dg.DagsterInstance, asset: str, key: str) -> dict:
    """The metadata values of the asset's latest materialization of partition `key`."""
    (record,) = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1).records
    return {k: v.value for k, v in record.asset_materialization.metadata.items()}
