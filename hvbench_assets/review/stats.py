"""The timing figures of the stats page and `hvbench review-stats`: seconds per decision, too-fast decisions and
the no-edit share."""

from __future__ import annotations

from typing import Any

from hvbench_assets.core.curation.review_stats import decision_times, fast_decisions, no_edit_shares
from hvbench_assets.core.warehouse import Warehouse


def clip_durations(wh: Warehouse) -> dict[str, float]:
    """video_id -> clip seconds (video_probe's two columns only: its JSON columns are never decoded)."""
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE

    if not wh.has_table(VIDEO_PROBE.name):
        return {}
    return {r["video_id"]: r["duration_s"] for r in wh.query(
        f'SELECT video_id, duration_s FROM "{VIDEO_PROBE.name}" WHERE duration_s > 0')}


def timing_stats(s: dict[str, list], reviewed: list[dict], durations: dict[str, float],
                 floor_s: float) -> dict[str, Any]:
    """Seconds per decision, too-fast decisions and the no-edit share (the stats page and `hvbench review-stats`)."""
    from hvbench_assets.core.tasks.catalog import TASKS

    return {"times": decision_times(s["decisions"], durations, floor_s),
            "fast": fast_decisions(s["decisions"], durations, floor_s), "fast_floor_s": floor_s,
            "no_edit": no_edit_shares(reviewed, s["decisions"], [f.abbrev for f in TASKS if f.descriptive])}
