"""Counting decoded frames with a hook around PyAV itself (not our own counters), for tests and
benchmarks: every frame any codec context returns is counted, per file and kind (video/audio).

    with count_decodes() as counts:
        probe_video(path)
    counts.video(path)   # frames of `path` decoded

`install()` patches the process for good (benchmarks/decodes.py does that in each Dagster step
process through a sitecustomize module)."""

from __future__ import annotations

import os
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import av


class DecodeCounts(Counter):
    def video(self, path: str | Path | None = None) -> int:
        return self._sum("video", path)

    def audio(self, path: str | Path | None = None) -> int:
        return self._sum("audio", path)

    def _sum(self, kind: str, path) -> int:
        want = None if path is None else os.path.realpath(str(path))
        return sum(n for (p, k), n in self.items() if k == kind and (want is None or p == want))


_owner: dict[int, str] = {}  # id(codec context) -> file it decodes


def install(counts: DecodeCounts):
    """Patch av.open and CodecContext.decode; returns a function that undoes it."""
    real_open, real_decode = av.open, av.codec.context.CodecContext.decode

    def open_(file, *args, **kwargs):
        container = real_open(file, *args, **kwargs)
        if isinstance(file, (str, Path)) and isinstance(container, av.container.InputContainer):
            for s in container.streams:
                _owner[id(s.codec_context)] = os.path.realpath(str(file))
        return container

    def decode(self, *args, **kwargs):
        frames = real_decode(self, *args, **kwargs)
        for f in frames:
            kind = "video" if isinstance(f, av.VideoFrame) else "audio" if isinstance(f, av.AudioFrame) else "other"
            counts[(_owner.get(id(self), "?"), kind)] += 1
        return frames

    av.open, av.codec.context.CodecContext.decode = open_, decode

    def undo():
        av.open, av.codec.context.CodecContext.decode = real_open, real_decode

    return undo


@contextmanager
def count_decodes():
    counts = DecodeCounts()
    undo = install(counts)
    try:
        yield counts
    finally:
        undo()
