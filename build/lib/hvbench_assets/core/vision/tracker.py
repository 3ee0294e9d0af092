"""Online IoU face tracker: a detection joins the live track it overlaps most when IoU > threshold (the
paper's rule); a track survives detection gaps up to `max_gap` frames (profile turns, detector misses).

The paper detects on every frame. Detecting every k-th frame lets a moving face, or a detector that snaps
between pyramid scales, fall under the IoU threshold, so a second pass links the remaining pairs whose
centres moved less than `max_shift` face sizes and whose sizes differ less than `max_size_ratio`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hvbench_assets.core.vision.boxes import iou, size
from hvbench_assets.core.vision.tables import Box


@dataclass(frozen=True)
class Detection:
    box: Box  # source pixels
    score: float
    detector: str = ""  # which pass found it (stored per box), e.g. "primary" or "rescue:hog-rot-20"


@dataclass
class LiveTrack:
    key: int  # provisional, in creation order; final ids are assigned after short tracks are dropped
    detections: dict[int, Detection] = field(default_factory=dict)  # frame -> detection

    @property
    def first(self) -> int:
        return min(self.detections)

    @property
    def last(self) -> int:
        return max(self.detections)

    @property
    def last_box(self) -> Box:
        return self.detections[self.last].box


class IouTracker:
    def __init__(self, iou_threshold: float = 0.5, max_gap: int = 25, max_shift: float = 0.5,
                 max_size_ratio: float = 1.5):
        self.iou_threshold = iou_threshold
        self.max_gap = max_gap
        self.max_shift = max_shift
        self.max_size_ratio = max_size_ratio
        self.alive: list[LiveTrack] = []
        self._next_key = 0

    def update(self, frame: int, detections: list[Detection],
               verify: Callable[[LiveTrack, Detection], bool] | None = None,
               verify_after: int = 0) -> list[tuple[LiveTrack, Detection, int | None]]:
        """Assign detections of `frame` greedily by highest IoU. Returns (track, detection, previous
        detected frame or None for a new track) for every detection. A link across a gap longer than
        `verify_after` frames must also pass `verify` (an identity check), so a long gap cannot hand a
        track to a different person who appears at the same place."""
        grid = [(ti, di) for ti in range(len(self.alive)) for di in range(len(detections))]
        by_iou = sorted(((-iou(self.alive[ti].last_box, detections[di].box), ti, di) for ti, di in grid))
        by_shift = sorted((shift(self.alive[ti].last_box, detections[di].box), ti, di) for ti, di in grid)
        used_t: set[int] = set()
        used_d: set[int] = set()
        out: list[tuple[LiveTrack, Detection, int | None]] = []
        candidates = [p for p in by_iou if -p[0] > self.iou_threshold] + [
            p for p in by_shift
            if p[0] < self.max_shift and size_ratio(self.alive[p[1]].last_box, detections[p[2]].box) < self.max_size_ratio
        ]
        for _, ti, di in candidates:
            if ti in used_t or di in used_d:
                continue
            if verify is not None and frame - self.alive[ti].last > verify_after and not verify(self.alive[ti], detections[di]):
                continue
            used_t.add(ti)
            used_d.add(di)
            track = self.alive[ti]
            prev = track.last
            track.detections[frame] = detections[di]
            out.append((track, detections[di], prev))
        for di, d in enumerate(detections):
            if di not in used_d:
                track = LiveTrack(key=self._next_key, detections={frame: d})
                self._next_key += 1
                self.alive.append(track)
                out.append((track, d, None))
        return out

    def expire(self, frame: int | None = None) -> list[LiveTrack]:
        """Remove and return tracks not detected within `max_gap` frames before `frame` (all when None)."""
        if frame is None:
            done, self.alive = self.alive, []
            return done
        done = [t for t in self.alive if t.last < frame - self.max_gap]
        self.alive = [t for t in self.alive if t.last >= frame - self.max_gap]
        return done


def shift(a: Box, b: Box) -> float:
    """Distance between box centres in units of the larger box size."""
    d = ((a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2) ** 0.5 / 2
    return d / max(size(a), size(b), 1e-6)


def size_ratio(a: Box, b: Box) -> float:
    return max(size(a), size(b)) / max(min(size(a), size(b)), 1e-6)
