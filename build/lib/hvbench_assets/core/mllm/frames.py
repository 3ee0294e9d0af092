"""Frames for an MLLM request: sample a clip, cap the count, shrink, encode as JPEG."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames, probe_video, write_wav
from hvbench_assets.core.media.errors import MediaError
from hvbench_assets.core.media.frames import decoded_frames, to_bgr


def sample_frames(
    path: str | Path,
    n_frames: int | None = None,
    fps: float | None = None,
    max_side: int | None = 768,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> list[np.ndarray]:
    """BGR frames of a clip. `n_frames`: that many, evenly spaced (centre of equal slices), in
    one decode pass; fewer when the clip has fewer frames (a frame is never sent twice); `fps`: one frame per 1/fps seconds; both: fps sampling capped to n_frames
    evenly; neither: 8 evenly spaced frames."""
    if n_frames is not None and n_frames < 1:
        raise ValueError("n_frames must be >= 1")
    if fps is not None:
        frames = [f.image for f in iter_frames(path, sample_fps=fps, start_s=start_s, end_s=end_s, max_side=max_side)]
        return cap_frames(frames, n_frames) if n_frames else frames
    n = n_frames or 8
    info = probe_video(path, count_frames=False)
    end = min(end_s, info.duration_s) if end_s is not None else info.duration_s
    span = max(end - start_s, 1e-6)
    targets = [start_s + (i + 0.5) * span / n for i in range(n)]
    picked: list[np.ndarray] = []
    picked_t: list[float] = []
    prev = None
    pending = 0  # index of the next target time
    # decoded frames become pixels only when picked: converting every frame was most of the cost
    for t, _index, frame in decoded_frames(path, start_s, end_s):
        while pending < n and t + 1e-6 >= targets[pending]:
            # the frame nearest to the target: this one or the one before it; never one twice
            best = prev if prev is not None and targets[pending] - prev[0] < t - targets[pending] else (t, frame)
            if not picked_t or best[0] > picked_t[-1]:
                picked.append(to_bgr(best[1], max_side))
                picked_t.append(best[0])
            pending += 1
        if pending == n:
            break
        prev = (t, frame)
    if prev is None and not picked:
        raise MediaError(Path(path), f"no frames between {start_s:.2f}s and {end:.2f}s")
    if pending < n and prev is not None and (not picked_t or prev[0] > picked_t[-1]):
        picked.append(to_bgr(prev[1], max_side))  # the stream ended before the last target (duration metadata too long)
    return picked


def cap_frames(frames: Sequence[np.ndarray], max_frames: int) -> list[np.ndarray]:
    """At most `max_frames`, evenly spread over the sequence, first and last kept."""
    frames = list(frames)
    if max_frames <= 0 or len(frames) <= max_frames:
        return frames
    if max_frames == 1:
        return [frames[len(frames) // 2]]
    idx = np.linspace(0, len(frames) - 1, max_frames).round().astype(int)
    return [frames[i] for i in idx]


def shrink(image: np.ndarray, max_side: int | None) -> np.ndarray:
    h, w = image.shape[:2]
    if not max_side or max(h, w) <= max_side:
        return image
    scale = max_side / max(h, w)
    return cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)


def encode_jpeg(image: np.ndarray, quality: int = 85, max_side: int | None = None) -> bytes:
    """JPEG bytes of a BGR (or gray) uint8 image, shrunk to `max_side` first."""
    if image.dtype != np.uint8:
        raise ValueError(f"frames must be uint8, got {image.dtype}")
    ok, buf = cv2.imencode(".jpg", shrink(image, max_side), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError(f"could not JPEG-encode a frame of shape {image.shape}")
    return buf.tobytes()


def encode_wav(audio: np.ndarray, sample_rate: int) -> bytes:
    """16-bit mono WAV bytes, through the shared writer (which wants a path)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_wav(Path(tmp) / "a.wav", np.asarray(audio, dtype=np.float32), sample_rate)
        return path.read_bytes()


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()
