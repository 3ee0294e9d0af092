"""Body boxes for face tracks: the paper's matching rule, neighbour filling, and a face-geometry estimate."""

from __future__ import annotations

from collections.abc import Sequence

from hvbench_assets.core.vision.boxes import clip
from hvbench_assets.core.vision.tables import Box


def contains_face(body: Box, face: Box, tolerance: float = 0.25, head_zone: float = 0.6) -> bool:
    """A candidate body must hold the face centre, its top at most `tolerance` face heights below the
    face top (person detectors often cut the hair), and the face centre in its upper `head_zone`: a box
    that holds the face only near its bottom belongs to someone behind (e.g. an adult's torso above a
    child's head), and the area term of `match_body` would otherwise prefer it, being smaller."""
    cx, cy = (face[0] + face[2]) / 2, (face[1] + face[3]) / 2
    fh = face[3] - face[1]
    return (body[0] <= cx <= body[2] and body[1] - tolerance * fh <= face[1]
            and cy <= body[1] + head_zone * (body[3] - body[1]))


def match_body(face: Box, candidates: Sequence[Box]) -> int | None:
    """Index of the person box for `face`: among boxes that contain the face, the one minimising
    (horizontal centre distance)^2 + area (HumanVBench appendix K, eq. 1); None when no box contains it."""
    fcx = (face[0] + face[2]) / 2
    best, best_cost = None, float("inf")
    for i, b in enumerate(candidates):
        if not contains_face(b, face):
            continue
        cost = ((b[0] + b[2]) / 2 - fcx) ** 2 + (b[2] - b[0]) * (b[3] - b[1])
        if cost < best_cost:
            best, best_cost = i, cost
    return best


def fill_missing(boxes: Sequence[Box | None]) -> list[Box | None]:
    """Replace each None by the average of the nearest known boxes before and after it (the one known
    side when only one exists). All None stays all None."""
    known = [i for i, b in enumerate(boxes) if b is not None]
    if not known:
        return list(boxes)
    out: list[Box | None] = list(boxes)
    k = 0
    for i, b in enumerate(boxes):
        if b is not None:
            continue
        while k + 1 < len(known) and known[k + 1] < i:
            k += 1
        prev = known[k] if known[k] < i else None
        nxt = next((j for j in known[k:] if j > i), None)
        if prev is not None and nxt is not None:
            out[i] = tuple((p + n) / 2 for p, n in zip(boxes[prev], boxes[nxt]))  # type: ignore[assignment]
        else:
            out[i] = boxes[prev if prev is not None else nxt]
    return out


def estimate_body(face: Box, width: int, height: int) -> Box:
    """Body box guessed from face geometry when no person detector runs: about three face widths wide,
    from just above the head to six face heights below the chin, clipped to the frame."""
    fw, fh = face[2] - face[0], face[3] - face[1]
    cx = (face[0] + face[2]) / 2
    return clip((cx - 1.5 * fw, face[1] - 0.4 * fh, cx + 1.5 * fw, face[3] + 6.0 * fh), width, height)
