"""Fixed-size crop clips of one track: square face crops and letterboxed body crops.

Crops are cut from frames while the tracker decodes the clip, so each crop clip is fed frame by frame:
`CropClipWriter` runs `write_video` in a thread that reads frames from a bounded queue.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import write_video

Box = tuple[float, float, float, float]
BLACK = (0, 0, 0)


def crop_to(image: np.ndarray, box: Box, out_w: int, out_h: int) -> np.ndarray:
    """The region `box` scaled to fit out_w x out_h with its aspect kept, centred, padded black (also where
    the box leaves the image)."""
    bw, bh = max(1e-3, box[2] - box[0]), max(1e-3, box[3] - box[1])
    s = min(out_w / bw, out_h / bh)
    tx = out_w / 2 - s * (box[0] + box[2]) / 2
    ty = out_h / 2 - s * (box[1] + box[3]) / 2
    m = np.array([[s, 0, tx], [0, s, ty]], dtype=np.float64)
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, m, (out_w, out_h), flags=interp, borderMode=cv2.BORDER_CONSTANT, borderValue=BLACK)


# Crop clips are what L3 and L7 measure: with MB-tree the dozen crop encoders of one L1 pass wrote different
# pictures from identical frames in 3-4 of 6 face clips per run (every encode goes without it: encode.py), and
# L7's verdict on a borderline face followed them. One thread and no lookahead each: many encoders run at once.
CROP_X264 = "threads=1:rc-lookahead=0"


class CropClipWriter:
    """Streams frames into an H.264 mp4 from the caller's loop. `audio` is called once after the last frame
    (the span is known only then). `close()` waits for the file and re-raises encoder errors."""

    _END = object()

    def __init__(self, dst: str | Path, fps: float, audio: Callable[[], np.ndarray | None] | None = None,
                 max_queued: int = 32):
        self.dst = Path(dst)
        self.frames = 0
        self._q: queue.Queue = queue.Queue(maxsize=max_queued)
        self._error: BaseException | None = None
        self._ended = False  # the encoder thread has taken the end marker
        self._thread = threading.Thread(target=self._run, args=(fps, audio), daemon=True)
        self._thread.start()

    def _iter(self):
        while (item := self._q.get()) is not self._END:
            yield item
        self._ended = True

    def _run(self, fps, audio) -> None:
        try:
            write_video(self.dst, self._iter(), fps=fps, audio=audio, x264_params=CROP_X264)
        except BaseException as exc:  # surfaced by push/close in the caller's thread
            self._error = exc
            while not self._ended:  # drain so the producer never blocks
                self._ended = self._q.get() is self._END

    def push(self, image: np.ndarray) -> None:
        if self._error is not None:
            raise self._error
        self._q.put(image)
        self.frames += 1

    def close(self) -> Path:
        self._q.put(self._END)
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self.dst

    def abort(self) -> None:
        """Stop without keeping the file (used for tracks dropped as too short)."""
        if self._thread.is_alive():
            self._q.put(self._END)
            self._thread.join()
        self.dst.unlink(missing_ok=True)


def render_crop(src: str | Path, dst: str | Path, boxes: Mapping[int, Box], out_w: int, out_h: int,
                fps: float) -> Path:
    """Re-cut a crop clip from the source for stored per-frame boxes ({frame: box}, source pixels, e.g.
    square face windows or body boxes of one track) at another size, with the matching audio. The
    tracking pass already wrote the standard crops; this is for other sizes or lost files."""
    from hvbench_assets.core.media import iter_frames, source_audio

    if not boxes:
        raise ValueError("render_crop needs at least one box")
    first, last = min(boxes), max(boxes)
    start, end = first / fps, (last + 1) / fps
    frames = (crop_to(f.image, boxes[f.index], out_w, out_h)
              for f in iter_frames(src, start_s=max(0.0, start - 0.5 / fps), end_s=end) if f.index in boxes)
    return write_video(dst, frames, fps=fps, audio=source_audio(src, start, end),
                       x264_params=CROP_X264)
