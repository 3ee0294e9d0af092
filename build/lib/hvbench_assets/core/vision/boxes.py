"""Box arithmetic in (x1, y1, x2, y2) pixel coordinates."""

from __future__ import annotations

from hvbench_assets.core.vision.tables import Box


def iou(a: Box, b: Box) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def size(b: Box) -> float:
    """The longer side: the face size the summary reports."""
    return max(b[2] - b[0], b[3] - b[1])


def lerp(a: Box, b: Box, w: float) -> Box:
    """(1 - w) * a + w * b, coordinate-wise."""
    return tuple(float(x + (y - x) * w) for x, y in zip(a, b))  # type: ignore[return-value]


def scale(b: Box, factor: float) -> Box:
    return tuple(float(v * factor) for v in b)  # type: ignore[return-value]


def clip(b: Box, width: int, height: int) -> Box:
    return (
        float(min(max(b[0], 0), width)), float(min(max(b[1], 0), height)),
        float(min(max(b[2], 0), width)), float(min(max(b[3], 0), height)),
    )


def square_around(b: Box, margin: float) -> Box:
    """A square centred on the box, side = longer side * (1 + 2 * margin); may leave the frame."""
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    half = size(b) * (1 + 2 * margin) / 2
    return (cx - half, cy - half, cx + half, cy + half)


def overlaps(a: Box, b: Box, min_iou: float = 0.3) -> bool:
    """Two boxes of one face: IoU above `min_iou` or either centre inside the other box."""
    return iou(a, b) > min_iou or _centre_in(a, b) or _centre_in(b, a)


def _centre_in(a: Box, b: Box) -> bool:
    cx, cy = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    return b[0] <= cx <= b[2] and b[1] <= cy <= b[3]
