"""Inbox scanning as a pure state machine: which files are new, settled, changed, or skipped.

A file is picked up only after it has looked the same (size and mtime) on two scans and its mtime
is at least `settle_s` old, so a file still being copied is never read half-written. A picked-up
file whose size or mtime changes later is requested again under a new fingerprint.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.ingest.keys import assign_raw_key

VIDEO_EXTENSIONS = frozenset(
    {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".mpg", ".mpeg", ".wmv", ".flv", ".ts", ".mts", ".3gp"}
)
PARTIAL_SUFFIXES = (".part", ".crdownload", ".tmp", ".partial", ".download")


@dataclass(frozen=True)
class FileStat:
    rel_path: str  # posix path relative to the inbox (a folder ends with "/")
    size: int
    mtime: float
    passed_over: str | None = None  # why the sensor does not read this entry (hidden, link policy, ...)


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


HIDDEN_FILE = "hidden name (starts with '.', like macOS '._' copies): rename the file to process it"
_HIDDEN_COUNT_CAP = 10_000


def list_inbox(inbox: Path, allowed_roots: Sequence[Path | str] = ()) -> list[FileStat]:
    """Every entry under the inbox (recursively), as posix relative paths. Regular files the sensor may
    read have `passed_over` None; everything else carries the reason it is passed over.

    Symlink policy: a link (to a file or a folder) is followed only when its fully resolved target lies in
    one of `allowed_roots` (HVBENCH_ALLOWED_ROOTS); a link elsewhere (say to /etc/passwd), a broken link, a
    link loop and a link into the inbox itself (its target is read under its own name) are passed over with
    the reason. Names starting with '.' are passed over as hidden."""
    out: list[FileStat] = []
    if not inbox.is_dir():
        return out
    roots = [inbox.resolve(), *(Path(r).expanduser().resolve() for r in allowed_roots if str(r).strip())]
    seen_dirs = {inbox.resolve()}

    def pass_over(rel: str, reason: str, st: os.stat_result | None = None, size: int = 0) -> None:
        out.append(FileStat(rel, st.st_size if st else size, st.st_mtime if st else 0.0, reason))

    def walk(folder: Path, rel_dir: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            pass_over(f"{rel_dir}/", f"folder not readable ({exc.strerror})")
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                lst = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished between listing and stat
            if entry.name.startswith("."):
                if stat.S_ISDIR(lst.st_mode):
                    n = _count_files(Path(entry.path))
                    pass_over(f"{rel}/", f"hidden folder (name starts with '.'): its {n} file(s) are not read; "
                                         "rename it to process them", size=n)
                else:
                    pass_over(rel, HIDDEN_FILE, lst)
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                target = Path(os.path.realpath(path))
                if not target.exists():
                    pass_over(rel, f"broken symlink (its target {os.readlink(path)} does not exist)", lst)
                    continue
                if target.is_relative_to(roots[0]):  # read once, under its own name
                    inside = target.relative_to(roots[0]).as_posix() or "."
                    pass_over(rel, f"symlink to {inside} inside the inbox, which is read under its own name", lst)
                    continue
                if not any(target.is_relative_to(r) for r in roots[1:]):
                    pass_over(rel, f"symlink to {target}, outside the inbox and HVBENCH_ALLOWED_ROOTS: not followed", lst)
                    continue
            try:
                st = path.stat()
            except OSError as exc:
                pass_over(rel, f"not readable ({exc.strerror})", lst)
                continue
            if stat.S_ISDIR(st.st_mode):
                real = path.resolve()
                if real in seen_dirs:
                    pass_over(f"{rel}/", f"folder {real} is already listed (a symlink loop or a second link to it)")
                    continue
                seen_dirs.add(real)
                walk(path, rel)
            elif not stat.S_ISREG(st.st_mode):
                pass_over(rel, "not a regular file (a pipe, socket or device)", lst)
            else:
                out.append(FileStat(rel, st.st_size, st.st_mtime))

    walk(inbox, "")
    return out


def _count_files(folder: Path) -> int:
    n = 0
    for _, _, files in os.walk(folder):
        n += len(files)
        if n >= _HIDDEN_COUNT_CAP:
            break
    return n


def fingerprint(f: FileStat) -> str:
    return f"{f.size}-{int(f.mtime * 1000)}"


def scan(files: list[FileStat], state: dict, now: float, settle_s: float = 10.0,
         done: Mapping[str, tuple[str, str]] | None = None, waiting: Mapping[str, str] | None = None) -> ScanResult:
    """Decide what to pick up. `state` (the sensor's state) maps rel_path -> {"fp", "key", "picked"};
    the returned state replaces it. Files that disappeared are forgotten, except their keys, which stay
    reserved so a later file cannot take over another file's partition. `done` (rel_path -> (fingerprint,
    key)) names files already processed with that content: they count as picked, whatever `state` says.
    `waiting` (rel_path -> reason) names files not to decide on yet (their content is being checked): passed
    over with the reason, their state kept as it was."""
    done, waiting = done or {}, waiting or {}
    result = ScanResult()
    new_state: dict = {"files": {}, "keys": dict(state.get("keys", {})), "skips": {}}
    old_files: dict = state.get("files", {})
    old_skips: dict = state.get("skips", {})

    def skip(path: str, reason: str, fp: str | None = None) -> None:
        # said once per file, reason and content (fp), not on every tick; a growing file has no fp here
        new_state["skips"][path] = [reason, fp]
        if old_skips.get(path) != [reason, fp]:
            result.skipped.append((path, reason))
    for f in sorted(files, key=lambda f: f.rel_path):
        if f.passed_over:
            skip(f.rel_path, f.passed_over, fingerprint(f))
            continue
        ext = Path(f.rel_path).suffix.lower()
        if f.rel_path.lower().endswith(PARTIAL_SUFFIXES):
            skip(f.rel_path, "partial download (temporary suffix)", fingerprint(f))
            continue
        if ext not in VIDEO_EXTENSIONS:
            skip(f.rel_path, f"not a video file extension ({ext or 'none'})", fingerprint(f))
            continue
        fp = fingerprint(f)
        prev = old_files.get(f.rel_path, {})
        if f.rel_path in waiting:
            skip(f.rel_path, waiting[f.rel_path], fp)
            if prev:
                new_state["files"][f.rel_path] = prev
            continue
        entry = {"fp": fp, "picked": prev.get("picked"), "key": prev.get("key")}
        settled = prev.get("fp") == fp and now - f.mtime >= settle_s
        if f.rel_path in done and done[f.rel_path][0] == fp:
            # its rows exist for this content: nothing to run, even when the state was lost
            entry.update(picked=fp, key=entry["key"] or done[f.rel_path][1])
            new_state["keys"][entry["key"]] = f.rel_path
        elif entry["picked"] == fp:
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
