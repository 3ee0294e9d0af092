"""Shot splitting and the paper's basic clip filters, computed while a video is decoded once.

- Cuts: a content detector in the manner of PySceneDetect's ContentDetector (mean absolute change of
  hue, saturation and value between consecutive frames, on frames shrunk to `analysis_side`; a cut
  when it exceeds the threshold and the current shot is at least `min_shot_frames` long).
- Motion: the score of Data-Juicer's video_motion_score_filter, on the scale the paper's 1.2 threshold
  assumes: OpenCV Farneback flow (0.5, 3, 15, 3, 5, 1.2) between frames at their original size,
  sampled every round(fps / 2) frames, mean magnitude over pixels, then over frame pairs. Like that
  operator, a shot's first pair is its frames 0 and 1, then 1 and step, step and 2 step, ...
  Flow on shrunk frames is not a scaled copy of it (on the shared clips it read 1.3-4x higher), so
  the score is never computed on shrunk frames. The flow runs in a worker thread beside decoding.
- Windows: shots longer than `max_clip_s` are cut into equal windows no longer than it (on a grid of
  keyframes when the caller encodes shots as it decodes them, see split.py).
- Times are on the file's time line (media.container.time_origin): a video stream that starts
  0.84 s after its audio has its first shot start at 0.84 s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.ingest.clip_filter import ClipFilter
from hvbench_assets.core.media import MediaError
from hvbench_assets.core.media.frames import decoded_frames, to_bgr
from hvbench_assets.core.media.probe import check_complete

FARNEBACK = dict(pyr_scale=0.5, levels=3, winsize=15, iterations=3, poly_n=5, poly_sigma=1.2, flags=0)


@dataclass(frozen=True)
class Segment:
    index: int
    start_s: float
    end_s: float
    motion: float | None
    kept: bool
    reason: str

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class SceneAnalysis:
    fps: float
    duration_s: float  # end of the last frame on the file's time line
    frame_count: int
    width: int
    height: int
    cuts_s: list[float]  # start times of shots after the first
    segments: list[Segment]
    constant_rate: bool = True  # every frame within half a frame of index / fps
    start_s: float = 0.0  # time of the first frame


def motion_magnitude(prev_gray: np.ndarray, gray: np.ndarray) -> float:
    """Mean Farneback flow magnitude between two grey frames, in pixels."""
    flow = cv2.calcOpticalFlowFarneback(prev_gray, gray, None, **FARNEBACK)
    return float(np.mean(np.sqrt(flow[..., 0] ** 2 + flow[..., 1] ** 2)))


@dataclass
class _Shot:
    start_s: float
    frames: int = 0
    prev_gray: np.ndarray | None = None
    pairs: list[tuple[float, Future]] = field(default_factory=list)  # (time of the later frame, magnitude)


class ShotAnalyser:
    """Feed every frame of a video in order; finds shot cuts and samples motion for each shot."""

    def __init__(self, fps: float, width: int, height: int, f: ClipFilter = ClipFilter()):
        self.fps, self.width, self.height, self.f = fps, width, height, f
        self.step = max(1, round(fps / min(f.motion_fps, fps))) if fps > 0 else 1
        self.shots: list[_Shot] = []
        self.prev_hsv = None
        self.n = 0
        self.first_t: float | None = None
        self.last_t = 0.0
        self.max_jitter = 0.0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="motion")

    def feed(self, t: float, small_bgr: np.ndarray, full_gray: Callable[[], np.ndarray]) -> bool:
        """One frame: its time, a shrunk BGR copy, and a way to get its grey pixels at full size
        (called only for frames the motion score samples). True when it starts a new shot."""
        hsv = cv2.cvtColor(small_bgr, cv2.COLOR_BGR2HSV)
        new_shot = not self.shots
        if self.prev_hsv is not None:
            delta = float(np.mean(np.abs(hsv.astype(np.int16) - self.prev_hsv.astype(np.int16))))
            new_shot = delta >= self.f.cut_threshold and self.shots[-1].frames >= self.f.min_shot_frames
        self.prev_hsv = hsv
        if new_shot:
            self.shots.append(_Shot(start_s=t))
        shot = self.shots[-1]
        j = shot.frames
        if j <= 1 or j % self.step == 0:  # Data-Juicer's sampling: frames 0, 1, step, 2 step, ...
            gray = full_gray()
            if shot.prev_gray is not None:
                self._throttle()
                shot.pairs.append((t, self._pool.submit(motion_magnitude, shot.prev_gray, gray)))
            shot.prev_gray = gray
        shot.frames += 1
        if self.first_t is None:
            self.first_t = t
        if self.fps > 0:
            self.max_jitter = max(self.max_jitter, abs(t - self.first_t - self.n / self.fps))
        self.n += 1
        self.last_t = t
        return new_shot

    def _throttle(self, pending: int = 4) -> None:
        """Keep at most `pending` flows queued (full-size frames are large)."""
        waiting = [fut for s in self.shots[-2:] for _, fut in s.pairs if not fut.done()]
        for fut in waiting[: max(0, len(waiting) - pending + 1)]:
            fut.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def end_s(self) -> float:
        return self.last_t + (1.0 / self.fps if self.fps > 0 else 0.0)

    def shot_bounds(self) -> list[tuple[float, float]]:
        starts = [s.start_s for s in self.shots]
        return list(zip(starts, [*starts[1:], self.end_s()]))

    def finish(self, grid_s: float = 0.0) -> SceneAnalysis:
        """Segments (shots, long ones windowed on `grid_s`) with motion and keep/drop decisions."""
        try:
            if self.n == 0:
                raise ValueError("no frames")
            pairs = [(t, fut.result()) for s in self.shots for t, fut in s.pairs]
        finally:
            self.close()
        fps = self.fps if self.fps > 0 else self.n / max(self.last_t - (self.first_t or 0.0), 1e-3)
        segments: list[Segment] = []
        for a, b in self.shot_bounds():
            for wa, wb in split_windows(a, b, self.f.max_clip_s, grid_s):
                motion = _mean_motion(pairs, wa, wb)
                kept, reason = decide(wb - wa, self.width, self.height, motion, self.f)
                segments.append(Segment(len(segments), round(wa, 3), round(wb, 3), motion, kept, reason))
        return SceneAnalysis(fps, round(self.end_s(), 3), self.n, self.width, self.height,
                             [round(s.start_s, 3) for s in self.shots[1:]], segments,
                             constant_rate=self.max_jitter < 0.5 / fps, start_s=round(self.first_t or 0.0, 3))


def analyse(path: str | Path, width: int, height: int, fps: float, f: ClipFilter = ClipFilter(),
            expected_frames: int = 0) -> SceneAnalysis:
    """Find shots, split long ones, score motion and decide keep/drop for every segment, without
    writing clips (split.split_video does both in one pass). `expected_frames` (from the container
    header) turns a truncated file into a MediaError."""
    path = Path(path)
    analyser = ShotAnalyser(fps, width, height, f)
    try:
        for t, _, frame in decoded_frames(path):
            analyser.feed(t, to_bgr(frame, f.analysis_side), lambda fr=frame: full_gray(fr))
        if analyser.n == 0:
            raise MediaError(path, "video stream has 0 decodable frames")
        check_complete(path, analyser.n, expected_frames)
    except BaseException:
        analyser.close()
        raise
    return analyser.finish()


def full_gray(frame) -> np.ndarray:
    """Grey pixels at the original size, as Data-Juicer gets them (BGR from the decoder, then grey)."""
    return cv2.cvtColor(to_bgr(frame), cv2.COLOR_BGR2GRAY)


def split_windows(start: float, end: float, max_len: float, grid: float = 0.0) -> list[tuple[float, float]]:
    """Equal windows of at most `max_len` covering [start, end); with `grid` (at most half of
    `max_len`), inner boundaries move to the nearest point start + k x grid."""
    k = max(1, math.ceil((end - start) / max_len - 1e-9))
    while True:
        step = (end - start) / k
        inner = [start + i * step for i in range(1, k)]
        if grid > 0:
            inner = [start + round((x - start) / grid) * grid for x in inner]
        bounds = [start, *inner, end]
        windows = list(zip(bounds[:-1], bounds[1:]))
        if all(0 < b - a <= max_len + 1e-6 for a, b in windows):
            return windows
        k += 1  # rounding to the grid made one too long: one window more


def _mean_motion(pairs: list[tuple[float, float]], a: float, b: float) -> float | None:
    vals = [m for t, m in pairs if a < t <= b + 1e-6]
    return round(float(np.mean(vals)), 4) if vals else None


def decide(duration: float, width: int, height: int, motion: float | None, f: ClipFilter) -> tuple[bool, str]:
    """Keep/drop with the first failing rule as the reason."""
    if duration < f.min_duration_s:
        return False, f"too short: {duration:.2f}s < {f.min_duration_s:g}s"
    if width < f.min_width or height < f.min_height:
        return False, f"resolution {width}x{height} below {f.min_width}x{f.min_height}"
    if motion is None:
        return False, "motion could not be measured (fewer than two sampled frames)"
    if motion < f.min_motion:
        return False, f"static: motion score {motion:.2f} < {f.min_motion:g}"
    return True, f"kept: {duration:.1f}s, motion {motion:.2f}"
