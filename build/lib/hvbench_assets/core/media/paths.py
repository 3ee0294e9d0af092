"""Media paths as the warehouse stores them: relative to the data root (HVBENCH_DATA_DIR).

Every node of a cluster mounts the data root, not necessarily at the same place, so a stored path must not
name one host's mount point. Everything written to a table goes through `to_stored`, everything read back
through `resolve`.

- A file under the data root is stored as a POSIX path relative to it (`clips/r1/r1__000.mp4`).
- A file outside it (an inbox or a benchmark folder configured elsewhere, a link target in
  HVBENCH_ALLOWED_ROOTS) is stored absolute, with one warning per folder: copying raw videos in would double
  the storage, and a link to a folder only one host has would not help the others. Such a folder must be
  mounted at the same path on every node.
- A stored absolute path (also every path of a warehouse written before paths were relative) is read as is.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from hvbench_assets.core.settings import default_data_dir

log = logging.getLogger(__name__)
_warned: set[str] = set()


def data_root() -> Path:
    """The data root of this process (HVBENCH_DATA_DIR, default <project>/data), absolute, links not resolved."""
    return Path(os.path.abspath(default_data_dir()))


def relative_to_root(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str | None:
    """`path` relative to the data root as a POSIX string, or None when it lies outside."""
    base = Path(os.path.abspath(root)) if root is not None else data_root()
    p = Path(os.path.abspath(path))
    # the root or the file may be reached through a link (/tmp -> /private/tmp): try the resolved forms too
    for candidate, anchor in ((p, base), (p, base.resolve()), (p.resolve(), base.resolve())):
        try:
            rel = candidate.relative_to(anchor)
        except ValueError:
            continue
        return rel.as_posix() if rel.parts else "."
    return None


def to_stored(path: str | os.PathLike | None, root: str | os.PathLike | None = None) -> str | None:
    """The value a table keeps for `path`: relative to the data root, else absolute (with a warning)."""
    if path is None or str(path) == "":
        return None
    rel = relative_to_root(path, root)
    if rel is not None:
        return rel
    absolute = os.path.abspath(path)
    folder = os.path.dirname(absolute)
    if folder not in _warned:
        _warned.add(folder)
        log.warning("%s lies outside the data root %s: stored as an absolute path, so every node must mount %s "
                    "at that same path", absolute, root or data_root(), folder)
    return absolute


def resolve(stored: str | os.PathLike | None, root: str | os.PathLike | None = None) -> Path | None:
    """The file a stored value names on this host: relative values under the data root, absolute ones as is."""
    if stored is None or str(stored) == "":
        return None
    if os.path.isabs(stored):
        return Path(stored)
    base = Path(os.path.abspath(root)) if root is not None else data_root()
    return base.joinpath(*PurePosixPath(str(stored)).parts)


def stored_columns(row: Mapping[str, Any], columns: Iterable[str], root: str | os.PathLike | None = None) -> dict:
    """A copy of `row` with the path `columns` in their stored form (absent columns stay absent)."""
    out = dict(row)
    for c in columns:
        if c in out:
            out[c] = to_stored(out[c], root)
    return out
