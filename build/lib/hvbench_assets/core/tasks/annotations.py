"""Human ground truth (HC counts, AST/TSA action-time pairs): appended to `annotations`, latest wins."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.tasks.store import ANNOTATIONS
from hvbench_assets.core.warehouse import Warehouse


class BadAnnotation(ValueError):
    pass


def count_value(n: int) -> dict:
    if n < 1:
        raise BadAnnotation(f"a count must be at least 1, got {n}")
    return {"count": int(n)}


def action_value(action: str | None = None, start_s: float | None = None, ongoing: bool = False,
                 none: bool = False) -> dict:
    if none:
        return {"none": True}
    if ongoing:
        return {"ongoing": True, **({"action": action.strip()} if action else {})}
    if not action or not action.strip():
        raise BadAnnotation("an action annotation needs the action text (or --ongoing / --none)")
    if start_s is None or start_s < 0:
        raise BadAnnotation("an action annotation needs its start second (>= 0)")
    return {"action": action.strip(), "start_s": int(round(start_s))}


def record(warehouse: Warehouse, video_id: str, kind: str, value: Mapping[str, Any], track_id: int | None = None,
           annotator: str = "cli") -> str:
    """Append one annotation; returns its id."""
    if kind not in ("count", "action"):
        raise BadAnnotation(f"unknown annotation kind {kind!r} (count | action)")
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    ann_id = "a" + hashlib.sha256(json.dumps([video_id, kind, track_id, value, annotator, now.isoformat()],
                                             sort_keys=True).encode()).hexdigest()[:15]
    warehouse.replace(ANNOTATIONS, {"annotation_id": ann_id}, [{
        "video_id": video_id, "kind": kind, "track_id": track_id, "value": dict(value), "annotator": annotator,
        "created_at": now,
    }])
    return ann_id


def latest(warehouse: Warehouse, video_id: str, kind: str, track_ids: tuple[int, ...] | None = None) -> dict | None:
    """The newest annotation of `kind` for the clip (for actions: of one of `track_ids`)."""
    rows = warehouse.rows(ANNOTATIONS, order_by="created_at DESC", video_id=video_id, kind=kind)
    for r in rows:
        if track_ids is None or r["track_id"] is None or r["track_id"] in track_ids:
            return r
    return None


def clip_exists(warehouse: Warehouse, video_id: str) -> bool:
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE

    return warehouse.count(VIDEO_PROBE, video_id=video_id) > 0
