from __future__ import annotations

from pathlib import Path


class MediaError(RuntimeError):
    """A media file cannot be used; the message names the file and the reason."""

    def __init__(self, path: str | Path, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NoAudioError(MediaError):
    def __init__(self, path: str | Path):
        super().__init__(path, "no audio stream")
