"""Marked question videos: a red box around one track, numbered boxes around all tracks."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import (
    iter_frames,
    probe_video,
    source_audio,
    write_video,
)

HIGHLIGHT_BGR = (0, 0, 255)  # the paper's red target box
NUMBER_BGR = (0, 215, 255)  # amber: readable on skin, sky and dark clothes, distinct from red

Box = tuple[float, float, float, float]

# The same quality target (crf 20) at 0.5-0.7x veryfast's CPU and 1.5x its size: the numbered video of
# two_people_talking took 9-13 of the ASD step's 10-17 CPU-s. Labels are never measured on question videos.
QUESTION_PRESET = "superfast"


def render_marked(
    src: str | Path,
    dst: str | Path,
    boxes_by_frame: Mapping[int, Mapping[int, Box]],
    highlight: int | Collection[int] | None = None,
    numbers: Mapping[int, int] | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> Path:
    """Re-encode `src` (H.264 + its audio) with boxes drawn on it.

    `boxes_by_frame` maps a source frame index to {track_id: (x1, y1, x2, y2)} in source pixels (see
    `core.vision.boxes_by_frame`). `highlight` draws that track's box in red; `numbers` draws every listed
    track's box with its person number (`core.vision.number_tracks`: the clip's fixed order). Both may be given;
    `highlight` may name several tracks (one person whose tracks L2 merged).
    """
    highlight = {highlight} if isinstance(highlight, int) else set(highlight or ())
    if not highlight and not numbers:
        raise ValueError("render_marked needs a track to highlight or numbers to draw")
    info = probe_video(src, count_frames=False)
    frames = _marked_frames(src, boxes_by_frame, highlight, numbers or {}, start_s, end_s)
    return write_video(dst, frames, fps=info.fps, audio=source_audio(src, start_s, end_s), preset=QUESTION_PRESET)


def _marked_frames(src, boxes_by_frame, highlight, numbers, start_s, end_s) -> Iterator[np.ndarray]:
    for fr in iter_frames(src, start_s=start_s, end_s=end_s):
        img = fr.image
        boxes = boxes_by_frame.get(fr.index, {})
        if boxes:
            img = img.copy()
            scale = max(img.shape[:2]) / 720
            for tid, number in numbers.items():
                if tid in boxes and tid not in highlight:
                    draw_box(img, boxes[tid], NUMBER_BGR, scale, str(number))
            for tid in highlight & boxes.keys():
                draw_box(img, boxes[tid], HIGHLIGHT_BGR, scale, str(numbers[tid]) if tid in numbers else None)
        yield img


def draw_box(img: np.ndarray, box: Box, color: tuple[int, int, int], scale: float, label: str | None = None) -> None:
    """Draw a box (clipped to the image) and an optional label in a filled tag above its top-left corner."""
    h, w = img.shape[:2]
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    x1, x2 = max(0, min(w - 1, x1)), max(0, min(w - 1, x2))
    y1, y2 = max(0, min(h - 1, y1)), max(0, min(h - 1, y2))
    thick = max(2, int(round(3 * scale)))
    cv2.rectangle(img, (x1, y1), (x2, y2), color, thick)
    if label:
        font_scale = 0.9 * scale
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        ty = y1 - 2 if y1 - th - base - 4 >= 0 else min(h - 1, y1 + th + base + 4)
        cv2.rectangle(img, (x1, ty - th - base - 2), (x1 + tw + 6, ty), color, -1)
        cv2.putText(img, label, (x1 + 3, ty - base), cv2.FONT_HERSHEY_SIMPLEX, font_scale, (0, 0, 0), thick, cv2.LINE_AA)
