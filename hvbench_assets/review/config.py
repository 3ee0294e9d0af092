"""The review app's settings (`hvbench review` fills them from the settings table)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.review_stats import DEFAULT_FAST_FLOOR_S
from hvbench_assets.core.tasks import annotations


@dataclass(frozen=True)
class ReviewConfig:
    warehouse: Path
    data_dir: Path
    require_token: bool = False
    excluded: frozenset[str] = frozenset()
    roots: tuple[Path, ...] = ()  # folders besides data_dir that question videos may lie in
    dagster_url: str = "http://127.0.0.1:3000"
    host: str = "127.0.0.1"  # the bound address; on loopback only its names are accepted in the Host header
    annotation_limits: annotations.AnnotationLimits = annotations.AnnotationLimits()
    max_body_bytes: int = 1_000_000  # HVBENCH_REVIEW_MAX_BODY: larger request bodies get 413 before anything is read
    lease_minutes: float = leases.DEFAULT_LEASE_MINUTES  # HVBENCH_REVIEW_LEASE_MINUTES
    fast_floor_s: float = DEFAULT_FAST_FLOOR_S  # HVBENCH_REVIEW_FAST_S: quicker than this, video unplayed: marked
    extra: dict[str, Any] = field(default_factory=dict)
