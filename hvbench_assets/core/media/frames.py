"""Frame iteration with PyAV: sampling rate, time window, resizing, one decode pass."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

from hvbench_assets.core.media.container import open_media
from hvbench_assets.core.media.errors import MediaError
from hvbench_assets.core.media.probe import display_rotation


@dataclass(frozen=True)
class Frame:
    index: int  # index in the source stream (0-based, counting every decoded frame)
    t: float  # presentation time in seconds from the start of the stream
    image: np.ndarray  # H x W x 3, uint8, BGR (OpenCV order)


def iter_frames(
    path: str | Path,
    sample_fps: float | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
    max_side: int | None = None,
) -> Iterator[Frame]:
    """Yield decoded frames in order. `sample_fps=None` yields every frame; otherwise the first
    frame at or after each tick of 1/sample_fps. `max_side` shrinks frames (never enlarges)."""
    path = Path(path)
    container = open_media(path)
    try:
        if not container.streams.video:
            raise MediaError(path, "no video stream")
        vs = container.streams.video[0]
        vs.thread_type = "AUTO"
        start_time = float(vs.start_time * vs.time_base) if vs.start_time is not None else 0.0
        if start_s > 1.0:
            # seek to the keyframe before start; decoding continues from there
            container.seek(int((start_s + start_time - 1.0) / vs.time_base), stream=vs, backward=True)
        step = 1.0 / sample_fps if sample_fps else None
        next_t = start_s
        index = -1
        rate = float(vs.average_rate or vs.guessed_rate or 25)
        try:
            for frame in container.decode(vs):
                t = float(frame.pts * frame.time_base) - start_time if frame.pts is not None else (index + 1) / rate
                index = int(round(t * rate))
                if t < start_s - 1e-6:
                    continue
                if end_s is not None and t >= end_s:
                    break
                if step is not None:
                    if t + 1e-6 < next_t:
                        continue
                    next_t += step * max(1, int((t - next_t) / step) + 1)
                yield Frame(index=index, t=t, image=_to_bgr(frame, max_side))
        except av.error.FFmpegError as exc:
            if index < 0:
                raise MediaError(path, f"video cannot be decoded ({exc})") from exc
            # a truncated tail: keep what decoded, like a player would
    finally:
        container.close()


def _to_bgr(frame: av.VideoFrame, max_side: int | None) -> np.ndarray:
    """BGR pixels as a player would show them: a display-rotation flag (phone videos) is applied."""
    w, h = frame.width, frame.height
    if max_side and max(w, h) > max_side:
        scale = max_side / max(w, h)
        w, h = max(2, int(round(w * scale / 2)) * 2), max(2, int(round(h * scale / 2)) * 2)
        image = frame.to_ndarray(format="bgr24", width=w, height=h)
    else:
        image = frame.to_ndarray(format="bgr24")
    quarter_turns = display_rotation(frame) // 90
    return np.ascontiguousarray(np.rot90(image, quarter_turns)) if quarter_turns else image
