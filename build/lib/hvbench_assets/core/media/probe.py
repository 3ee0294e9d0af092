"""Container facts about one media file (PyAV), with clear errors for unusable files."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import av

from hvbench_assets.core.media.container import open_media, time_origin
from hvbench_assets.core.media.errors import MediaError


@dataclass(frozen=True)
class VideoProbe:
    path: str
    duration_s: float
    fps: float
    frame_count: int
    width: int
    height: int
    video_codec: str
    has_audio: bool
    audio_codec: str | None
    audio_sample_rate: int | None
    audio_channels: int | None
    file_size: int
    sha256: str

    def as_row(self) -> dict:
        return asdict(self)


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _stream_duration(stream, container) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


@dataclass(frozen=True)
class PacketIndex:
    """What demuxing the video stream tells without decoding a frame (times on the file's time
    line, see container.time_origin)."""

    times: list[float]  # presentation time of every video packet, sorted
    keyframes: list[float]  # presentation times of the keyframes, sorted
    complete: bool  # the demuxer reached the end without an error
    hidden: int = 0  # packets an edit list hides (decoded for reference, never shown)

    def constant_rate(self, fps: float) -> bool:
        """Frames sit on a 1/fps grid (within half a frame), as in a camera's CFR file."""
        if not self.times or fps <= 0:
            return False
        t0 = self.times[0]
        return max(abs(t - t0 - i / fps) for i, t in enumerate(self.times)) < 0.5 / fps


def index_packets(container, vs) -> PacketIndex:
    """Demux the video stream (reading packets, decoding none)."""
    origin = time_origin(container)
    times, keys, complete, hidden = [], [], True, 0
    try:
        for pkt in container.demux(vs):
            if pkt.size == 0 or pkt.pts is None:
                continue  # flush packets
            if pkt.is_discard:
                hidden += 1  # a sample an edit list hides
                continue
            t = float(pkt.pts * pkt.time_base) - origin
            times.append(t)
            if pkt.is_keyframe:
                keys.append(t)
    except av.error.FFmpegError:
        complete = False
    return PacketIndex(sorted(times), sorted(keys), complete, hidden)


def probe_video(path: str | Path, count_frames: bool = True) -> VideoProbe:
    """Probe a video. `count_frames` counts the frames by demuxing packets (no decoding); when that
    count disagrees with the header's, the stream is decoded to settle it, so a truncated file
    fails. Without it the header's count is trusted. Width and height are as displayed (a rotation
    flag applied). Raises MediaError for missing, empty, corrupt, truncated, audio-only or 0-frame
    files. Decodes one frame (the rotation flag travels with decoded frames)."""
    path = Path(path)
    container = open_media(path)
    try:
        if not container.streams.video:
            kind = "audio-only file" if container.streams.audio else "no video stream"
            raise MediaError(path, kind)
        vs = container.streams.video[0]
        ctx = vs.codec_context
        width, height = int(ctx.width or 0), int(ctx.height or 0)
        if width <= 0 or height <= 0:
            raise MediaError(path, "video stream has no frame size (corrupt header)")
        rate = vs.average_rate or vs.guessed_rate or vs.base_rate
        fps = float(rate) if rate else 0.0
        audio = container.streams.audio[0] if container.streams.audio else None
        header = int(vs.frames or 0)
        duration = _stream_duration(vs, container)
        expected = header or (int(round(duration * fps)) if duration and fps else 0)
        rotation = _first_frame_rotation(container, vs, path)
        frames = header
        if count_frames or not header:
            container.seek(0)
            index = index_packets(container, vs)
            frames = len(index.times)  # the header counts the samples an edit list hides too
            if count_frames and (abs(frames + index.hidden - header) > 1 if header else True):
                container.seek(0)  # demux and header disagree: decoding settles it
                frames = _count_video_frames(container, vs, path)
                check_complete(path, frames, expected)
        if rotation % 180:  # a phone's portrait video: stored landscape, shown upright (see iter_frames)
            width, height = height, width
        if frames <= 0:
            raise MediaError(path, "video stream has 0 decodable frames")
        if not 0 < fps <= 1000:
            fps = frames / duration if duration else 0.0
        if not duration or duration <= 0:
            duration = frames / fps if fps else 0.0
        return VideoProbe(
            path=str(path),
            duration_s=round(float(duration), 4),
            fps=round(fps, 4),
            frame_count=frames,
            width=width,
            height=height,
            video_codec=ctx.name,
            has_audio=audio is not None,
            audio_codec=audio.codec_context.name if audio is not None else None,
            audio_sample_rate=int(audio.codec_context.sample_rate) if audio is not None else None,
            audio_channels=int(audio.codec_context.channels) if audio is not None else None,
            file_size=path.stat().st_size,
            sha256=file_sha256(path),
        )
    finally:
        container.close()


def _count_video_frames(container, vs, path: Path) -> int:
    """Decode the whole stream to count its frames (only when demuxing and the header disagree)."""
    n = 0
    try:
        for _ in container.decode(vs):
            n += 1
    except av.error.FFmpegError as exc:
        if n == 0:
            raise MediaError(path, f"video stream cannot be decoded ({exc})") from exc
    return n


def _first_frame_rotation(container, vs, path: Path) -> int:
    """Display rotation of the first frame; a file whose first frame cannot be decoded is unusable."""
    try:
        for frame in container.decode(vs):
            return display_rotation(frame)
    except av.error.FFmpegError as exc:
        raise MediaError(path, f"video stream cannot be decoded ({exc})") from exc
    raise MediaError(path, "video stream has 0 decodable frames")


def display_rotation(frame: av.VideoFrame) -> int:
    """Counter-clockwise display rotation in multiples of 90 degrees (0 when the file has none)."""
    return int(round((getattr(frame, "rotation", 0) or 0) / 90.0)) * 90 % 360


def check_complete(path: Path, decoded: int, expected: int) -> None:
    """A file whose header promises many more frames than decode is truncated or corrupt."""
    if expected and decoded < 0.9 * expected - 2:
        raise MediaError(path, f"truncated or corrupt: only {decoded} of {expected} frames decodable")


def as_fraction(fps: float) -> Fraction:
    return Fraction(fps).limit_denominator(1001)
