"""Run workers forked from a preloaded process instead of spawned afresh.

Dagster's code server starts each run's worker with multiprocessing's `spawn`: a new interpreter that imports
Dagster and this package and loads the definitions before the run's first step, 2.8 s and 2.7 CPU seconds of a
run (benchmarks/run_worker_start.py), more than the labels of a 2 s clip. In a code server that loaded these
definitions, `preloaded` makes that `forkserver` instead: one process imports Dagster, this package and every
module the definitions load (PRELOAD, hvbench_assets/preload.py) once, when the first run starts; each run's
worker is forked from it, inherits those modules and only builds the definitions (0.9 s, 0.6 CPU seconds). The
run, its events, logs, termination and failures go through Dagster's own code (`start_run_in_subprocess`); only
the start method differs.

Edited code never runs stale: once the package's files differ from what the preloaded process imported, runs
are spawned as before (until the code server restarts, e.g. when the code location is reloaded).

Switched on by configuration, not by importing anything: the project's instance class (runtime/instance.py,
named by dagster_home/dagster.yaml) calls `install` when a code server creates its instance, before it loads the
definitions. An instance without that class, `HVBENCH_RUN_WORKERS=spawn` and a platform without `forkserver` keep
Dagster's own start.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path

from hvbench_assets.runtime.dagster_private import RUN_WORKER_MODULE, code_server_class

MODES = ("preloaded", "spawn")
PRELOAD = [RUN_WORKER_MODULE, "hvbench_assets.preload"]
PACKAGE = Path(__file__).resolve().parents[1]


def source_stamp(root: Path = PACKAGE) -> tuple[int, int]:
    """(newest modification time in ns, file count) of the package's Python files: an edit, an added or a
    removed module changes it."""
    times = [p.stat().st_mtime_ns for p in root.rglob("*.py")]
    return (max(times, default=0), len(times))


class StartMethod:
    """Which multiprocessing context the next run worker starts from: the preloaded fork server while the
    package is as it was when the fork server started (with the first run), spawn from the first change on."""

    def __init__(self, stamp: Callable[[], tuple[int, int]] = source_stamp):
        self._stamp = stamp
        self._first: tuple[int, int] | None = None
        self.stale = False
        self._lock = threading.Lock()

    def context(self):
        now = self._stamp()
        with self._lock:
            if self._first is None:
                self._first = now  # the fork server starts with this run and imports the files as they are now
            self.stale = self.stale or now != self._first
            if self.stale:
                return multiprocessing.get_context("spawn")
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx


_installed: list[StartMethod] = []


def install(mode: str) -> bool:
    """In a Dagster code server and with mode `preloaded`: its StartRun starts run workers from
    StartMethod.context(). True when installed (now or before)."""
    if mode not in MODES:
        raise ValueError(f"HVBENCH_RUN_WORKERS={mode!r}: expected one of {', '.join(MODES)}")
    server = code_server_class()
    if mode != "preloaded" or server is None or "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    if _installed:
        return True
    method = StartMethod()
    start_run = server.StartRun

    def StartRun(self, request, context):  # noqa: N802 - Dagster's gRPC method name
        self._mp_ctx = method.context()  # StartRun takes the worker's queue, event and process from it
        return start_run(self, request, context)

    server.StartRun = StartRun
    _installed.append(method)
    return True
