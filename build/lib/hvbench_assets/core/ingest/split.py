"""A raw video -> its clips, decoding the file once.

The frames decoded for shot detection and motion are the frames the clips are made of, so there is
one decode pass per file:

- `encode` (any source): while decoding, each shot is encoded as it plays, at a constant rate, into
  a temporary file with a keyframe every second. When the shot ends its windows are known; kept ones
  become clips by copying that file's packets (window bounds sit on those keyframes), with the
  source's sound for the same time range beside them.
- `copy` (a short constant-rate H.264 mp4 whose streams start together): a single kept shot is the
  file itself. A shot that starts on one of the source's keyframes is not encoded: its clip copies
  the source's packets up to the next cut, wherever that falls (media.encode.copy_packets ends it
  off a keyframe with an edit list). A shot that starts off a keyframe cannot be copied; it is
  encoded while it is decoded, as in `encode`, from the very frame the cut is found on (the cut
  detector compares a frame with the one before it, so it has no latency). Nothing is decoded twice
  unless a copy turns out impossible (an open GOP at a shot's start): then that clip is decoded
  again from the keyframe before it.

Clip ranges are on the source's time line (media.container.time_origin), the same for picture and
sound, so a source whose video starts later than its audio is cut in sync.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2

from hvbench_assets.core.ingest.scenes import ClipFilter, SceneAnalysis, ShotAnalyser
from hvbench_assets.core.media import MediaError, VideoProbe, cut_clip, source_audio
from hvbench_assets.core.media.container import open_media, time_origin
from hvbench_assets.core.media.encode import ConstantRate, VideoEncoder, copy_packets
from hvbench_assets.core.media.frames import decoded_frames, to_bgr
from hvbench_assets.core.media.probe import check_complete, display_rotation, index_packets

COPY_SUFFIXES = (".mp4", ".m4v")


@dataclass
class SplitResult:
    analysis: SceneAnalysis
    strategy: str  # "copy", "encode" or "copy, encode <n> of <m> shots ..." (see the module docstring)
    clips: dict[int, Path] = field(default_factory=dict)  # kept segment index -> clip file
    how: dict[int, str] = field(default_factory=dict)  # kept segment index -> how it was written


def copy_eligible(src: Path, header: VideoProbe, f: ClipFilter) -> tuple[bool, list[float]]:
    """Whether a file may become its own clip(s) without re-encoding (short, H.264 in mp4, frames on a
    constant grid by packet timestamps, picture and sound starting together), and its keyframe times;
    nothing is decoded."""
    if header.video_codec != "h264" or src.suffix.lower() not in COPY_SUFFIXES or header.duration_s > f.max_clip_s:
        return False, []
    container = open_media(src)
    try:
        vs = container.streams.video[0]
        origin = time_origin(container)
        starts = [float(s.start_time * s.time_base) - origin for s in (vs, *container.streams.audio[:1])
                  if s.start_time is not None]
        index = index_packets(container, vs)
    finally:
        container.close()
    aligned = max(starts, default=0.0) - min(starts, default=0.0) < 0.5 / header.fps
    return index.complete and aligned and index.constant_rate(header.fps), index.keyframes


class _ShotFile:
    """One shot encoded while it is decoded: constant rate, a keyframe every `gop` frames."""

    def __init__(self, path: Path, start_s: float, fps: float, gop: int):
        self.path, self.start_s = path, start_s
        self.encoder = VideoEncoder(path, fps, gop=gop)
        self.ticks = ConstantRate(start_s, fps)

    def push(self, t: float, frame) -> None:
        for image in self.ticks.push(t, frame):
            self.encoder.push(image)

    def finish(self, end_s: float) -> None:
        for image in self.ticks.finish(end_s):
            self.encoder.push(image)
        self.encoder.close()


def split_video(src: str | Path, header: VideoProbe, f: ClipFilter, clip_path: Callable[[int], Path]) -> SplitResult:
    """Find shots, score motion, decide keep/drop and write every kept segment to `clip_path(index)`,
    decoding `src` once (see the module docstring). Raises MediaError naming the file for unusable
    input; then no clip file is left behind."""
    src = Path(src)
    fps = header.fps
    eligible, keyframes = copy_eligible(src, header, f)
    gop = max(1, min(round(fps), int(f.max_clip_s * fps / 2)))  # keyframes every second (window bounds)
    work = Path(tempfile.mkdtemp(prefix=".split-", dir=clip_path(0).parent))
    analyser = ShotAnalyser(fps, header.width, header.height, f)
    shots: list[_ShotFile | None] = []  # per shot: its file encoded while decoding, or None (copied later)
    written: list[Path] = []
    try:
        for t, _, frame in decoded_frames(src):
            full = []

            def full_bgr(frame=frame, full=full):
                if not full:
                    full.append(to_bgr(frame))
                return full[0]

            new_shot = analyser.feed(t, to_bgr(frame, f.analysis_side),
                                     lambda: cv2.cvtColor(full_bgr(), cv2.COLOR_BGR2GRAY))
            if new_shot:
                if shots and shots[-1] is not None:
                    shots[-1].finish(t)
                on_key = eligible and any(abs(k - t) < 0.5 / fps for k in keyframes)
                shots.append(None if on_key else _ShotFile(work / f"shot{len(shots):04d}.mp4", t, fps, gop))
            if shots[-1] is not None:
                as_is = display_rotation(frame) == 0 and frame.width % 2 == 0 and frame.height % 2 == 0
                shots[-1].push(t, frame if as_is else full_bgr())
        if analyser.n == 0:
            raise MediaError(src, "video stream has 0 decodable frames")
        check_complete(src, analyser.n, header.frame_count)
        if shots[-1] is not None:
            shots[-1].finish(analyser.end_s())
        encoded = [s for s in shots if s is not None]
        analysis = analyser.finish(grid_s=gop / fps if encoded else 0.0)
        if not eligible:
            strategy = "encode"
        elif encoded:
            strategy = f"copy, encode {len(encoded)} of {len(shots)} shots (starting off a keyframe)"
        else:
            strategy = "copy"
        result = SplitResult(analysis, strategy)
        bounds = analyser.shot_bounds()
        for seg in analysis.segments:
            if not seg.kept:
                continue
            dst = clip_path(seg.index)
            written.append(dst)
            i = max(i for i, (a, _) in enumerate(bounds) if a <= seg.start_s + 1e-3)
            if shots[i] is not None:
                result.how[seg.index] = _from_shot(src, dst, seg, shots[i], bounds[i][1])
            else:
                result.how[seg.index] = _from_source(src, dst, seg, analysis)
            result.clips[seg.index] = dst
        return result
    except BaseException:
        analyser.close()
        for s in shots:
            if s is not None:
                s.encoder.abort()
        for p in written:
            p.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _from_shot(src: Path, dst: Path, seg, shot: _ShotFile, shot_end: float) -> str:
    last = seg.end_s >= round(shot_end, 3) - 1e-3  # the shot's last window: copy to its end
    audio = source_audio(src, seg.start_s, seg.end_s)
    if copy_packets(shot.path, dst, seg.start_s - shot.start_s, None if last else seg.end_s - shot.start_s, audio):
        return "encoded while decoding"
    raise MediaError(src, f"internal: window {seg.start_s:.3f}-{seg.end_s:.3f}s is not on the shot's keyframes")


def _from_source(src: Path, dst: Path, seg, analysis: SceneAnalysis) -> str:
    if len(analysis.segments) == 1:  # the file is its own single clip: no re-encode
        tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)  # a label run reading the previous version never sees half a file
        return "copied file"
    last = seg.end_s >= analysis.duration_s - 1e-3
    audio = source_audio(src, seg.start_s, seg.end_s)
    if copy_packets(src, dst, seg.start_s, None if last else seg.end_s, audio):
        return "copied packets"
    cut_clip(src, dst, seg.start_s, seg.end_s, fps=analysis.fps)  # decodes from the keyframe before it
    return "re-encoded"
