"""Opening a media file for reading, with one set of clear errors for every reader."""

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
