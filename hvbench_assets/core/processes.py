"""Whether a process id names a live process (used to tell a stale export folder or a stopped cluster node), and
which native runtimes have run in this process (a child forked after some of them cannot use them)."""

from __future__ import annotations

import os


def pid_alive(pid: int | None) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:  # gone meanwhile; without /proc (not Linux) kill(0) has the last word
        return not os.path.isdir("/proc/self")


_RAN: set[str] = set()  # inherited by a forked child: the runtime's state in its memory is the parent's


def mark_ran(runtime: str) -> None:
    """Records that `runtime` (a native library with its own threads, e.g. an OpenMP) has run in this process."""
    _RAN.add(runtime)


def has_run(runtime: str) -> bool:
    """Whether `runtime` has run in this process or in the parent it was forked from."""
    return runtime in _RAN
