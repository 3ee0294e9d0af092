"""A per-frame speaker score plot for the UI: one line per track over the clip's time, zero marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hvbench_assets.core.render.keyframe import person_label

PALETTE = ((40, 90, 230), (40, 170, 40), (210, 120, 30), (170, 40, 170), (30, 170, 200), (120, 120, 120))


def line_label(row: Mapping[str, Any], numbers: Mapping[int, int] | None) -> str:
    """A plot line's name, as the key frame names the face ("P1 t3"), and whether the track speaks."""
    name = person_label((numbers or {}).get(row["track_id"]), row["track_id"])
    return name + (" speaks" if row.get("speaking") else "")


def render_score_plot(rows: Sequence[Mapping[str, Any]], dst: str | Path, size: tuple[int, int] = (720, 240),
                      numbers: Mapping[int, int] | None = None) -> Path | None:
    """PNG of every scored row's `scores` (clipped to -1..1) against the clip time; speaking tracks are
    drawn thick. Lines are named as the key frame names faces ("P1 t3": `numbers`, the clip's person numbers,
    and the track id). None when no row has scores."""
    import cv2

    rows = [r for r in rows if r.get("scores")]
    if not rows:
        return None
    w, h = size
    left, right, top, bottom = 44, 10, 10, 40
    fps = float(rows[0].get("fps") or 25.0)
    end = max((r.get("first_frame") or 0) + len(r["scores"]) for r in rows)
    img = np.full((h, w, 3), 255, np.uint8)

    def x(frame):
        return left + (w - left - right) * np.asarray(frame, float) / max(1, end - 1)

    def y(score):
        return top + (h - top - bottom) * (1 - (np.clip(np.asarray(score, float), -1, 1) + 1) / 2)

    for v in (-1.0, 0.0, 1.0):
        cv2.line(img, (left, int(y(v))), (w - right, int(y(v))), (0, 0, 0) if v == 0 else (220, 220, 220), 1)
        cv2.putText(img, f"{v:+.0f}", (4, int(y(v)) + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (80, 80, 80), 1)
    for s in range(0, int(end / fps) + 1):
        cv2.putText(img, f"{s}s", (int(x(s * fps)) - 6, h - bottom + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (80, 80, 80), 1)
    for k, r in enumerate(rows):
        colour = PALETTE[k % len(PALETTE)]
        first = r.get("first_frame") or 0
        pts = np.stack([x(first + np.arange(len(r["scores"]))), y(r["scores"])], axis=1).astype(np.int32)
        cv2.polylines(img, [pts], False, colour, 2 if r.get("speaking") else 1, cv2.LINE_AA)
        cv2.putText(img, line_label(r, numbers), (left + 4 + 120 * k, h - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(dst), img):
        raise OSError(f"{dst}: could not write the speaker score plot")
    return dst
