"""Face-crop clips made inside the tests (dlib HOG + IoU linking), shaped like L1's crop clips:
frame i of a track's crop = source frame first_frame + i, fixed square size, real fps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import dlib

from hvbench_assets.core.media import iter_frames, probe_video


@dataclass
class CropTrack:
    first_frame: int
    boxes: list = field(default_factory=list)  # (x1, y1, x2, y2) per frame, None = missed
    frames: list = field(default_factory=list)


def _iou(a, b) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter + 1e-9)


def face_crop_tracks(path: Path, size: int = 160, min_frames: int = 25, upsample: int = 1, detect_max_side: int = 480,
                     start_s: float = 0.0, end_s: float | None = None) -> tuple[list[CropTrack], float]:
    """Tracks (longest first) with their square face crops, and the clip's fps. Faces are detected on
    frames shrunk to `detect_max_side` (speed) and cropped from the full-size frame."""
    fps = probe_video(path, count_frames=False).fps
    detector = dlib.get_frontal_face_detector()
    tracks: list[CropTrack] = []
    images = {}
    for f in iter_frames(path, start_s=start_s, end_s=end_s):
        images[f.index] = f.image
        scale = min(1.0, detect_max_side / max(f.image.shape[:2]))
        gray = cv2.cvtColor(cv2.resize(f.image, None, fx=scale, fy=scale) if scale < 1 else f.image, cv2.COLOR_BGR2GRAY)
        dets = [tuple(int(v / scale) for v in (r.left(), r.top(), r.right(), r.bottom())) for r in detector(gray, upsample)]
        for tr in tracks:
            last = next((b for b in reversed(tr.boxes) if b is not None), None)
            if tr.first_frame + len(tr.boxes) != f.index or last is None:
                continue
            match = max(dets, key=lambda d: _iou(d, last), default=None)
            if match is not None and _iou(match, last) > 0.3:
                tr.boxes.append(match)
                dets.remove(match)
            elif len(tr.boxes) and sum(b is None for b in tr.boxes[-10:]) < 10:
                tr.boxes.append(None)  # a short miss: keep the track alive
        for d in dets:
            tracks.append(CropTrack(f.index, [d]))
    out = []
    for tr in tracks:
        while tr.boxes and tr.boxes[-1] is None:
            tr.boxes.pop()
        if len(tr.boxes) < min_frames:
            continue
        box = None
        for i, b in enumerate(tr.boxes):
            box = b or box
            x1, y1, x2, y2 = box
            cx, cy, half = (x1 + x2) / 2, (y1 + y2) / 2, 0.8 * max(x2 - x1, y2 - y1)
            img = images[tr.first_frame + i]
            pad = cv2.copyMakeBorder(img, 400, 400, 400, 400, cv2.BORDER_CONSTANT)
            crop = pad[int(cy - half) + 400 : int(cy + half) + 400, int(cx - half) + 400 : int(cx + half) + 400]
            tr.frames.append(cv2.resize(crop, (size, size)))
        out.append(tr)
    return sorted(out, key=lambda t: -len(t.frames)), fps
