"""Face-crop clips for the speaker tests, made by the real L1 pipeline (core.vision) exactly as the
`human_tracks` asset makes them: frame i of a crop = source frame first_frame + i, real fps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.pipeline import track_video


@dataclass
class CropTrack:
    first_frame: int
    face_size: float  # median face box side in source pixels
    frames: list[np.ndarray]


def face_crop_tracks(path: Path, out_dir: Path) -> tuple[list[CropTrack], float]:
    """Tracks of `path` (longest first) with their face-crop frames, and the clip's fps."""
    result = track_video(path, out_dir, build_backend("offline"))
    tracks = [
        CropTrack(row["first_frame"], row["face_size_median"], [f.image for f in iter_frames(row["face_clip_path"])])
        for row in result.tracks if row.get("face_clip_path")
    ]
    return sorted(tracks, key=lambda t: -len(t.frames)), result.fps
