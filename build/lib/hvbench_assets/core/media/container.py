"""Opening a media file for reading, with one set of clear errors for every reader, and the one
time line every reader uses."""

from __future__ import annotations

from pathlib import Path

import av

from hvbench_assets.core.media.errors import MediaError


def open_media(path: str | Path) -> av.container.InputContainer:
    """An open PyAV container; MediaError naming the file for missing, empty or unreadable files."""
    path = Path(path)
    if not path.exists():
        raise MediaError(path, "file does not exist")
    if path.is_dir():
        raise MediaError(path, "is a directory, not a video file")
    if path.stat().st_size == 0:
        raise MediaError(path, "empty file (0 bytes)")
    try:
        return av.open(str(path), metadata_errors="ignore")
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise MediaError(path, f"not a readable media container ({exc.__class__.__name__}: {exc})") from exc


def time_origin(container: av.container.InputContainer) -> float:
    """Seconds to subtract from any stream's presentation time: the container's start (its earliest
    stream), as a player shows 0:00. Streams keep their own offsets on this time line, so a video
    stream starting 0.84 s after its audio has its first frame at 0.84 s. FFmpeg has already applied
    mp4 edit lists to the timestamps."""
    if container.start_time is not None:
        return container.start_time / av.time_base
    starts = [float(s.start_time * s.time_base) for s in container.streams if s.start_time is not None]
    return min(starts) if starts else 0.0
