"""Warehouse tables of the ingest stage and the lookup every per-clip label starts from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.warehouse import TableSpec, Warehouse

RAW_VIDEOS = TableSpec(
    "raw_videos",
    (
        ("raw_video_id", "VARCHAR"),
        ("path", "VARCHAR"),
        ("file_size", "BIGINT"),
        ("mtime", "DOUBLE"),
        ("sha256", "VARCHAR"),
        ("first_seen", "TIMESTAMP"),
    ),
    key=("raw_video_id",),
    provenance=False,
    description="Registry of inbox files and the partition key each one got",
)

CLIPS = TableSpec(
    "clips",
    (
        ("raw_video_id", "VARCHAR"),
        ("clip_index", "INTEGER"),
        ("video_id", "VARCHAR"),  # the `videos` partition key (kept clips only)
        ("start_s", "DOUBLE"),
        ("end_s", "DOUBLE"),
        ("duration_s", "DOUBLE"),
        ("kept", "BOOLEAN"),
        ("reason", "VARCHAR"),  # why kept / dropped
        ("motion_score", "DOUBLE"),
        ("width", "INTEGER"),
        ("height", "INTEGER"),
        ("clip_path", "VARCHAR"),
        ("sha256", "VARCHAR"),
        ("source_sha256", "VARCHAR"),
    ),
    key=("raw_video_id",),
    description="Every shot/window cut from a raw video, kept or dropped, with its source range",
)

VIDEO_PROBE = TableSpec(
    "video_probe",
    (
        ("video_id", "VARCHAR"),
        ("status", "VARCHAR"),
        ("reason", "VARCHAR"),
        ("path", "VARCHAR"),
        ("duration_s", "DOUBLE"),
        ("fps", "DOUBLE"),
        ("frame_count", "INTEGER"),
        ("width", "INTEGER"),
        ("height", "INTEGER"),
        ("video_codec", "VARCHAR"),
        ("has_audio", "BOOLEAN"),
        ("audio_codec", "VARCHAR"),
        ("audio_sample_rate", "INTEGER"),
        ("audio_channels", "INTEGER"),
        ("file_size", "BIGINT"),
        ("sha256", "VARCHAR"),
    ),
    description="Container facts of one clip",
)

INBOX_SKIPS = TableSpec(
    "inbox_skips",
    (
        ("inbox", "VARCHAR"),
        ("path", "VARCHAR"),  # relative to the inbox; a folder ends with "/"
        ("reason", "VARCHAR"),
        ("noticed_at", "TIMESTAMP"),
    ),
    key=("inbox",),
    provenance=False,
    description="Every inbox entry the inbox sensor currently passes over, and why (read by `hvbench status`)",
)


class ClipNotFound(LookupError):
    pass


@dataclass(frozen=True)
class ClipInfo:
    """What a per-clip label needs to start: the file and its probed facts."""

    video_id: str
    path: Path
    duration_s: float
    fps: float
    frame_count: int
    width: int
    height: int
    has_audio: bool
    sha256: str


def load_clip(warehouse: Warehouse, video_id: str) -> ClipInfo:
    """The probed clip for a `videos` partition key. Raises ClipNotFound (with what to run) when
    the clip was never probed or its probe failed."""
    rows = warehouse.rows(VIDEO_PROBE, video_id=video_id)
    if not rows:
        raise ClipNotFound(f"clip {video_id!r} has no video_probe row: materialize video_probe for it first")
    r = rows[0]
    if r["status"] != "ok":
        raise ClipNotFound(f"clip {video_id!r} is unusable: {r['reason']}")
    return ClipInfo(
        video_id=video_id, path=resolve(r["path"]), duration_s=r["duration_s"], fps=r["fps"],
        frame_count=r["frame_count"], width=r["width"], height=r["height"], has_audio=r["has_audio"],
        sha256=r["sha256"],
    )


def clip_seconds(warehouse: Warehouse, video_ids: Sequence[str]) -> dict[str, float]:
    """Each kept clip's duration, seconds (what a batch's split weighs L1's clips by)."""
    rows = warehouse.query("SELECT video_id, duration_s FROM clips WHERE kept AND video_id IN (SELECT unnest(?))",
                           [list(video_ids)])
    return {r["video_id"]: float(r["duration_s"] or 0.0) for r in rows}
