"""Baselines the benchmarks divide by, measured in the same process as what they compare."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def plain_decode(path: Path, repeat: int = 1, threads: str = "AUTO", open_fn: Callable | None = None) -> float:
    """Best of `repeat`: seconds PyAV takes to decode every frame of `path` to BGR and do nothing else.
    `threads` "NONE" decodes on one thread (steadier as a measure of the host); `open_fn` replaces `av.open`
    (for a script that counts decodes by patching it)."""
    import av

    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        with (open_fn or av.open)(str(path)) as c:
            stream = c.streams.video[0]
            stream.thread_type = threads
            if threads == "NONE":
                stream.thread_count = 1
            for frame in c.decode(stream):
                frame.to_ndarray(format="bgr24")
        best = min(best, time.perf_counter() - t0)
    return best
