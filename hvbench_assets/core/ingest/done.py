"""What the warehouse says is already done, whatever a sensor's cursor remembers.

The sensors request a run for new or changed content; these lookups let them pass over content whose rows
already exist for the current code version, so a lost or reset cursor (or a new Dagster home over the same
warehouse) does not run finished work again.
"""

from __future__ import annotations

from pathlib import Path

from hvbench_assets.core.ingest.inbox import FileStat, fingerprint
from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.warehouse import Warehouse


def split_files(wh: Warehouse, inbox: Path, code_version: str) -> dict[str, tuple[str, str]]:
    """Inbox file (path relative to `inbox`) -> (its fingerprint (size and mtime) when registered, its partition
    key), for each file whose content `scene_clips` has hashed and split with `code_version`. A file that still
    has that size and mtime holds that content: the sensor never reads a file's bytes (a tick must stay short)."""
    if not (wh.has_table(CLIPS.name) and wh.has_table(RAW_VIDEOS.name)):
        return {}
    rows = wh.query(
        "SELECT r.raw_video_id, r.path, r.file_size, r.mtime FROM raw_videos r WHERE r.sha256 IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM clips c WHERE c.raw_video_id = r.raw_video_id AND c.source_sha256 = r.sha256 "
        "AND c.code_version = ?)", [code_version])
    root = inbox.resolve()
    out = {}
    for r in rows:
        try:
            rel = resolve(r["path"]).resolve().relative_to(root).as_posix()
        except ValueError:
            continue  # registered from another inbox folder
        out[rel] = (fingerprint(FileStat(rel, r["file_size"], r["mtime"])), r["raw_video_id"])
    return out


def probed_clips(wh: Warehouse, code_version: str, after: tuple[str, str] | None = None) -> dict[str, str]:
    """Kept clip -> its content hash, for each clip whose `video_probe` row has that hash and `code_version`
    (the per-clip run's first step). With `after` = (table, code version), only clips whose row in that table has
    this code version and was written after the probe (the MLLM caption of the full per-clip run)."""
    if not (wh.has_table(CLIPS.name) and wh.has_table(VIDEO_PROBE.name)):
        return {}
    sql = ("SELECT c.video_id, c.sha256 FROM clips c JOIN video_probe p ON p.video_id = c.video_id "
           "AND p.sha256 = c.sha256 AND p.code_version = ? WHERE c.kept")
    params: list = [code_version]
    if after is not None:
        table, version = after
        if not wh.has_table(table):
            return {}
        sql += (f' AND EXISTS (SELECT 1 FROM "{table}" t WHERE t.video_id = c.video_id AND t.code_version = ? '
                "AND t.materialized_at >= p.materialized_at)")
        params.append(version)
    return {r["video_id"]: r["sha256"] for r in wh.query(sql, params)}
