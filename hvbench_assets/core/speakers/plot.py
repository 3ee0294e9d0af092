"""A per-frame speaker score plot for the UI: one line per track over the clip's time, on an axis that fits the
scores, the decision threshold (0) drawn, coinciding lines dashed in turn, the legend wrapped."""

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


def y_range(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The axis: whole numbers around every score, never narrower than -1..1 (Light-ASD's scores reach +-3)."""
    values = np.concatenate([np.asarray(r["scores"], float) for r in rows])
    return float(min(-1.0, np.floor(values.min()))), float(max(1.0, np.ceil(values.max())))


def same_as(rows: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """{row index: the earlier row index it coincides with}: equal scores over the same frames would hide each
    other, so the plot dashes them in turn and the legend says so."""
    out: dict[int, int] = {}
    for i, r in enumerate(rows):
        for j in range(i):
            q = rows[j]
            if ((r.get("first_frame") or 0) == (q.get("first_frame") or 0) and len(r["scores"]) == len(q["scores"])
                    and np.allclose(r["scores"], q["scores"], atol=0.02)):
                out[i] = out.get(j, j)
                break
    return out


def legend_places(widths: Sequence[int], left: int, right: int, gap: int = 14) -> list[tuple[int, int]]:
    """(x, line) of each legend entry, entries wrapped onto further lines instead of running past `right`."""
    out, x, line = [], left, 0
    for w in widths:
        if x > left and x + w > right:
            x, line = left, line + 1
        out.append((x, line))
        x += w + gap
    return out


def render_score_plot(rows: Sequence[Mapping[str, Any]], dst: str | Path, size: tuple[int, int] = (720, 240),
                      numbers: Mapping[int, int] | None = None) -> Path | None:
    """PNG of every scored row's `scores` against the clip time, on an axis that holds them all, with the decision
    threshold drawn (a frame speaks above 0; a track speaks when such a run is long enough); speaking tracks are
    drawn thick, lines that coincide dashed in turn so each stays visible. Lines are named as the key frame names
    faces ("P1 t3": `numbers`, the clip's person numbers, and the track id). None when no row has scores."""
    import cv2

    rows = [r for r in rows if r.get("scores")]
    if not rows:
        return None
    font, fs = cv2.FONT_HERSHEY_SIMPLEX, 0.4
    twins = same_as(rows)
    labels = [line_label(r, numbers) + (f" (= {line_label(rows[twins[k]], numbers).split(' speaks')[0]})"
                                        if k in twins else "") for k, r in enumerate(rows)]
    w = size[0]
    left, right, top = 44, 10, 10
    places = legend_places([cv2.getTextSize(t, font, fs, 1)[0][0] for t in labels], left + 4, w - right)
    h = size[1] + 16 * max(p[1] for p in places)
    bottom = 40 + 16 * max(p[1] for p in places)
    fps = float(rows[0].get("fps") or 25.0)
    end = max((r.get("first_frame") or 0) + len(r["scores"]) for r in rows)
    lo, hi = y_range(rows)
    img = np.full((h, w, 3), 255, np.uint8)

    def x(frame):
        return left + (w - left - right) * np.asarray(frame, float) / max(1, end - 1)

    def y(score):
        return top + (h - top - bottom) * (hi - np.asarray(score, float)) / (hi - lo)

    step = 1 if hi - lo <= 6 else 2
    for v in np.arange(lo, hi + 0.5, step):
        cv2.line(img, (left, int(y(v))), (w - right, int(y(v))), (0, 0, 0) if v == 0 else (220, 220, 220), 1)
        cv2.putText(img, f"{v:+.0f}", (4, int(y(v)) + 4), font, fs, (80, 80, 80), 1)
    cv2.putText(img, "speaks above 0", (w - right - 100, int(y(0)) - 4), font, 0.35, (0, 0, 0), 1, cv2.LINE_AA)
    for sec in range(0, int(end / fps) + 1):
        cv2.putText(img, f"{sec}s", (int(x(sec * fps)) - 6, h - bottom + 14), font, 0.35, (80, 80, 80), 1)
    for k, r in enumerate(rows):
        colour = PALETTE[k % len(PALETTE)]
        first = r.get("first_frame") or 0
        pts = np.stack([x(first + np.arange(len(r["scores"]))), y(r["scores"])], axis=1).astype(np.int32)
        width = 2 if r.get("speaking") else 1
        group = [i for i in range(len(rows)) if twins.get(i, i) == twins.get(k, k)]
        if len(group) == 1:
            cv2.polylines(img, [pts], False, colour, width, cv2.LINE_AA)
        else:  # coinciding lines: dashes of 6 frames, each line its own turn
            turn, dash = group.index(k), 6
            for a in range(turn * dash, len(pts) - 1, dash * len(group)):
                cv2.polylines(img, [pts[a : a + dash + 1]], False, colour, width, cv2.LINE_AA)
        px, line = places[k]
        cv2.putText(img, labels[k], (px, h - bottom + 32 + 16 * line), font, fs, colour, 1, cv2.LINE_AA)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(dst), img):
        raise OSError(f"{dst}: could not write the speaker score plot")
    return dst
