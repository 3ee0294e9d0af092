"""The clip filter's thresholds, apart from the splitter (core/ingest/scenes.py) so the settings table can take its
defaults from here without importing OpenCV."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClipFilter:
    """Thresholds; defaults follow appendix K where it gives one (duration >= 1 s, motion >= 1.2).
    The paper kept sources of at least 1280x480; that is far stricter than most footage, so the
    default here is 320x240 and `paper_resolution` is reported by an asset check instead."""

    min_duration_s: float = 1.0
    max_clip_s: float = 30.0
    min_width: int = 320
    min_height: int = 240
    min_motion: float = 1.2
    cut_threshold: float = 27.0
    min_shot_frames: int = 15
    motion_fps: float = 2.0
    analysis_side: int = 256
