"""Derived media written beside the previous version and swapped in with the rows that name it.

A label writes its files into a folder of its own run (`<parent>/run-<run id>`), commits the warehouse rows
naming those files, and only then removes the older folders. A run killed half-way therefore leaves the
previous rows and the previous files together; its own half-written folder is removed by the next run
that completes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

PREFIX = "run-"


def run_folder(parent: Path, run_id: str) -> Path:
    """A fresh folder for this run's files (emptied when a retry of the same run reuses it)."""
    folder = parent / f"{PREFIX}{run_id}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def remove_replaced(parent: Path, keep: Path, still_running: Callable[[str], bool]) -> list[Path]:
    """Call after the rows naming files in `keep` are committed: delete every other entry of `parent`
    (older runs' folders, files of the flat layout used before run folders) except the folders of runs
    that are still in progress, whose rows may yet be committed. Returns what was removed."""
    removed = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else []:
        if entry == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            if entry.name.startswith(PREFIX) and still_running(entry.name[len(PREFIX):]):
                continue
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
