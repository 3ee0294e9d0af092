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
            entries = [(boxes[tid], NUMBER_BGR, str(number)) for tid, number in numbers.items()
                       if tid in boxes and tid not in highlight]
            entries += [(boxes[tid], HIGHLIGHT_BGR, str(numbers[tid]) if tid in numbers else None)
                        for tid in highlight & boxes.keys()]
            draw_boxes(img, entries, scale)
        yield img


def draw_box(img: np.ndarray, box: Box, color: tuple[int, int, int], scale: float, label: str | None = None) -> None:
    """Draw a box (clipped to the image) and an optional label in a filled tag above its top-left corner."""
    draw_boxes(img, [(box, color, label)], scale)


def draw_boxes(img: np.ndarray, entries: list[tuple[Box, tuple[int, int, int], str | None]], scale: float,
               ) -> list[tuple[int, int, int, int]]:
    """Draw every box (clipped to the image), then each label in a filled tag placed so that no two tags overlap
    (place_tags); returns the tags' rectangles (x1, y1, x2, y2), labelled entries in order."""
    h, w = img.shape[:2]
    thick = max(2, int(round(3 * scale)))
    font_scale = 0.9 * scale
    clipped = []
    for box, color, _ in entries:
        x1, y1, x2, y2 = (int(round(v)) for v in box)
        x1, x2 = max(0, min(w - 1, x1)), max(0, min(w - 1, x2))
        y1, y2 = max(0, min(h - 1, y1)), max(0, min(h - 1, y2))
        cv2.rectangle(img, (x1, y1), (x2, y2), color, thick)
        clipped.append((x1, y1, x2, y2))
    labelled = [(b, color, label) for b, (_, color, label) in zip(clipped, entries) if label]
    sizes = []
    for _, _, label in labelled:
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        sizes.append((tw + 6, th + base + 2, base))
    tags = place_tags([b for b, _, _ in labelled], [(tw, th) for tw, th, _ in sizes], (h, w))
    for (tx1, ty1, tx2, ty2), (_, color, label), (_, _, base) in zip(tags, labelled, sizes):
        cv2.rectangle(img, (tx1, ty1), (tx2, ty2), color, -1)
        cv2.putText(img, label, (tx1 + 3, ty2 - base), cv2.FONT_HERSHEY_SIMPLEX, font_scale, (0, 0, 0), thick,
                    cv2.LINE_AA)
    return tags


def place_tags(boxes: list[tuple[int, int, int, int]], sizes: list[tuple[int, int]], shape: tuple[int, int],
               ) -> list[tuple[int, int, int, int]]:
    """A rectangle (x1, y1, x2, y2) of the given size per box for its label, inside the image and overlapping no
    other label: above the box's top-left corner where free (where a lone box's label always went), else just
    inside its top, below its bottom, then further up or down in steps of the tag's height (crowded rows of faces,
    e.g. a T2H still). Greedy, boxes in order of their top edge; a tag that fits nowhere takes the candidate
    overlapping least."""
    h, w = shape
    placed: dict[int, tuple[int, int, int, int]] = {}

    def clamp(x, y, tw, th):
        x, y = max(0, min(w - tw, x)), max(0, min(h - th, y))
        return (x, y, x + tw, y + th)

    def overlap(a, b):
        return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))

    for i in sorted(range(len(boxes)), key=lambda k: (boxes[k][1], boxes[k][0])):
        (x1, y1, x2, y2), (tw, th) = boxes[i], sizes[i]
        ys = [y1 - 2 - th, y1 + 2, y2] + [y1 - 2 - th * k for k in range(2, 6)] + [y2 + th * k for k in range(1, 5)]
        xs = [x1, x2 - tw]
        wanted = [(x, y) for y in ys for x in xs]
        candidates = [clamp(x, y, tw, th) for x, y in wanted]
        # least overlap, then a place that needed no moving into the picture, then the order above
        placed[i] = candidates[min(range(len(candidates)), key=lambda k: (
            sum(overlap(candidates[k], p) for p in placed.values()), candidates[k][:2] != wanted[k], k))]
    return [placed[i] for i in range(len(boxes))]
