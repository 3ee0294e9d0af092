"""Whether a process id names a live process (used to tell a stale export folder or a stopped cluster node)."""

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
