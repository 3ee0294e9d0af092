"""Checks that flag clips outside the ranges the paper's pipeline keeps (warnings, not failures)."""


import dagster as dg

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.runtime.batch import per_clip_check
from hvbench_assets.defs.ingest.assets import video_probe
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import WarehouseResource

PAPER_MIN_WIDTH, PAPER_MIN_HEIGHT = 1280, 480
PAPER_MIN_S, PAPER_MAX_S = 1.0, 30.0


def _probe_row(warehouse: WarehouseResource, video_id: str) -> dict | None:
    rows = warehouse.get().rows(VIDEO_PROBE, video_id=video_id)
    return rows[0] if rows and rows[0]["status"] == "ok" else None


def _missing(video_id: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"reason": f"no usable probe for {video_id}"})


@dg.asset_check(asset=video_probe, partitions_def=videos_partitions,
                description="Clip length within the paper's 1-30 s range")
@per_clip_check
def clip_duration_in_paper_range(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    row = _probe_row(warehouse, context.partition_key)
    if row is None:
        return _missing(context.partition_key)
    d = row["duration_s"]
    return dg.AssetCheckResult(passed=PAPER_MIN_S <= d <= PAPER_MAX_S, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"duration_s": d, "range_s": f"{PAPER_MIN_S:g}-{PAPER_MAX_S:g}"})


@dg.asset_check(asset=video_probe, partitions_def=videos_partitions,
                description="Source resolution at least the paper's 1280x480")
@per_clip_check
def paper_resolution(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    row = _probe_row(warehouse, context.partition_key)
    if row is None:
        return _missing(context.partition_key)
    ok = row["width"] >= PAPER_MIN_WIDTH and row["height"] >= PAPER_MIN_HEIGHT
    return dg.AssetCheckResult(passed=ok, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"size": f"{row['width']}x{row['height']}",
                                         "paper_min": f"{PAPER_MIN_WIDTH}x{PAPER_MIN_HEIGHT}"})


@dg.asset_check(asset=video_probe, partitions_def=videos_partitions,
                description="Clip has an audio stream (the speech-visual tasks need one)")
@per_clip_check
def has_audio_stream(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    row = _probe_row(warehouse, context.partition_key)
    if row is None:
        return _missing(context.partition_key)
    return dg.AssetCheckResult(passed=bool(row["has_audio"]), severity=dg.AssetCheckSeverity.WARN,
                               metadata={"audio_codec": row["audio_codec"] or "none"})
