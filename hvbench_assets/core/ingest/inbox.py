"""Inbox scanning as a pure state machine: which files are new, settled, changed, or skipped.

A file is picked up only after it has looked the same (size and mtime) on two scans and its mtime
is at least `settle_s` old, so a file still being copied is never read half-written. A picked-up
file whose size or mtime changes later is requested again under a new fingerprint.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.ingest.keys import assign_raw_key

VIDEO_EXTENSIONS = frozenset(
    {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".mpg", ".mpeg", ".wmv", ".flv", ".ts", ".mts", ".3gp"}
)
PARTIAL_SUFFIXES = (".part", ".crdownload", ".tmp", ".partial", ".download")


@dataclass(frozen=True)
class FileStat:
    rel_path: str  # posix path relative to the inbox
    size: int
    mtime: float


@dataclass(frozen=True)
class Pickup:
    rel_path: str
    raw_video_id: str
    fingerprint: str
    size: int
    mtime: float
    changed: bool  # True when this file was picked up before with other content


@dataclass
class ScanResult:
    pickups: list[Pickup] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason), new reasons only
    state: dict = field(default_factory=dict)


def list_inbox(inbox: Path) -> list[FileStat]:
    """Every regular, non-hidden file under the inbox (recursively), as posix relative paths."""
    out: list[FileStat] = []
    if not inbox.is_dir():
        return out
    for root, dirs, files in os.walk(inbox):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            p = Path(root) / name
            try:
                st = p.stat()
            except OSError:
                continue  # vanished between listing and stat
            out.append(FileStat(p.relative_to(inbox).as_posix(), st.st_size, st.st_mtime))
    return out


def fingerprint(f: FileStat) -> str:
    return f"{f.size}-{int(f.mtime * 1000)}"


def scan(files: list[FileStat], state: dict, now: float, settle_s: float = 10.0) -> ScanResult:
    """Decide what to pick up. `state` (the sensor cursor) maps rel_path -> {"fp", "seen", "key",
    "picked"}; the returned state replaces it. Files that disappeared are forgotten, except their
    keys, which stay reserved so a later file cannot take over another file's partition."""
    result = ScanResult()
    new_state: dict = {"files": {}, "keys": dict(state.get("keys", {})), "skips": {}}
    old_files: dict = state.get("files", {})
    old_skips: dict = state.get("skips", {})

    def skip(path: str, reason: str) -> None:
        new_state["skips"][path] = reason
        if old_skips.get(path) != reason:  # say it once, not on every tick
            result.skipped.append((path, reason))
    for f in sorted(files, key=lambda f: f.rel_path):
        ext = Path(f.rel_path).suffix.lower()
        if f.rel_path.lower().endswith(PARTIAL_SUFFIXES):
            skip(f.rel_path, "partial download (temporary suffix)")
            continue
        if ext not in VIDEO_EXTENSIONS:
            skip(f.rel_path, f"not a video file extension ({ext or 'none'})")
            continue
        fp = fingerprint(f)
        prev = old_files.get(f.rel_path, {})
        entry = {"fp": fp, "picked": prev.get("picked"), "key": prev.get("key")}
        settled = prev.get("fp") == fp and now - f.mtime >= settle_s
        if entry["picked"] == fp:
            pass  # already requested with this content
        elif not settled:
            skip(f.rel_path, "waiting for the file to settle (still being copied?)")
        else:
            key = entry["key"] or assign_raw_key(f.rel_path, new_state["keys"])
            new_state["keys"][key] = f.rel_path
            result.pickups.append(Pickup(f.rel_path, key, fp, f.size, f.mtime, changed=entry["picked"] is not None))
            entry.update(picked=fp, key=key)
        new_state["files"][f.rel_path] = entry
    result.state = new_state
    return result
