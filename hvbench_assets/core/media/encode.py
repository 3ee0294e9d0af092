"""Writing browser-playable H.264/AAC mp4 files: clip cutting and rendering from frames."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from hvbench_assets.core.media.audio import load_audio
from hvbench_assets.core.media.errors import MediaError, NoAudioError
from hvbench_assets.core.media.frames import Frame, iter_frames

AUDIO_RATE = 48_000


def write_video(
    dst: str | Path,
    frames: Iterable[np.ndarray],
    fps: float,
    audio: np.ndarray | Callable[[], np.ndarray | None] | None = None,
    audio_rate: int = AUDIO_RATE,
    crf: int = 20,
) -> Path:
    """Encode BGR frames (all the same size) to H.264 (yuv420p, faststart) with optional mono audio.
    `audio` may be a callable, called after the last frame, for streams whose audio span is known only
    then (track crops written while decoding). Written to a temporary name and renamed, so readers
    never see half a file."""
    dst = Path(dst)
    if dst.exists() and not dst.is_file():
        raise MediaError(dst, "destination exists and is not a regular file (refusing to replace it)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.stem}.{os.getpid()}.tmp.mp4")
    rate = Fraction(fps).limit_denominator(1001)
    out = av.open(str(tmp), mode="w", options={"movflags": "+faststart"})
    try:
        vs = None
        n = 0
        for image in frames:
            if vs is None:
                h, w = image.shape[:2]
                vs = out.add_stream("libx264", rate=rate)
                vs.width, vs.height = w - w % 2, h - h % 2
                vs.pix_fmt = "yuv420p"
                vs.options = {"crf": str(crf), "preset": "veryfast"}
                wants_audio = audio is not None and (callable(audio) or len(audio))
                astream = out.add_stream("aac", rate=audio_rate, layout="mono") if wants_audio else None
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image[: vs.height, : vs.width]), format="bgr24")
            frame.pts = n
            frame.time_base = 1 / rate
            out.mux(vs.encode(frame))
            n += 1
        if vs is None:
            raise MediaError(dst, "no frames to write")
        out.mux(vs.encode(None))
        if astream is not None:
            samples = audio() if callable(audio) else audio
            if samples is not None and len(samples):
                _encode_audio(out, astream, samples, audio_rate)
    except BaseException:
        out.close()
        tmp.unlink(missing_ok=True)
        raise
    out.close()
    os.replace(tmp, dst)
    return dst


def _encode_audio(out, stream, audio: np.ndarray, rate: int) -> None:
    samples = np.clip(audio.astype(np.float32), -1, 1)
    block = 1024
    for i in range(0, len(samples), block):
        chunk = samples[i : i + block]
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate = rate
        frame.pts = i
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))


def source_audio(src: str | Path, start_s: float = 0.0, end_s: float | None = None, rate: int = AUDIO_RATE) -> np.ndarray | None:
    """The source's audio for a time window at `rate`, or None when the file has no audio."""
    try:
        return load_audio(src, sample_rate=rate, start_s=start_s, end_s=end_s)
    except NoAudioError:
        return None


def cut_clip(src: str | Path, dst: str | Path, start_s: float, end_s: float, fps: float | None = None) -> Path:
    """Re-encode [start_s, end_s) of `src` with its audio into `dst` (frame-accurate cut)."""
    if end_s <= start_s:
        raise MediaError(src, f"empty time range {start_s:.3f}-{end_s:.3f}s")
    if fps is None:
        from hvbench_assets.core.media.probe import probe_video

        fps = probe_video(src, count_frames=False).fps
    frames = constant_rate(iter_frames(src, start_s=start_s, end_s=end_s), start_s, end_s, fps)
    return write_video(dst, frames, fps=fps, audio=source_audio(src, start_s, end_s))


def constant_rate(frames: Iterable[Frame], start_s: float, end_s: float, fps: float) -> Iterator[np.ndarray]:
    """Frames resampled by their timestamps to exactly `fps` over [start_s, end_s): each output tick
    shows the source frame on screen at that moment. A constant-rate source passes one to one; a
    variable-rate one (phones) gets frames repeated or dropped, so picture and sound stay in sync
    and every later step may count time as frame / fps."""
    n_out = max(1, int(round((end_s - start_s) * fps)))
    prev, k = None, 0
    for f in frames:
        rel = f.t - start_s
        while prev is not None and k < n_out and (k + 0.5) / fps <= rel:
            yield prev
            k += 1
        prev = f.image
    while prev is not None and k < n_out:
        yield prev
        k += 1
