"""What the warehouse says is already done, whatever a sensor's cursor remembers.

The sensors request a run for new or changed content; these lookups let them pass over content whose rows
already exist for the current code version, so a lost or reset cursor (or a new Dagster home over the same
warehouse) does not run finished work again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.ingest.inbox import FileStat, fingerprint
from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.media.probe import file_sha256
from hvbench_assets.core.warehouse import Warehouse


@dataclass(frozen=True)
class SplitFile:
    """A registered inbox file whose content `scene_clips` hashed and split."""
    key: str  # its raw_videos partition key
    size: int
    mtime: float  # when it was registered
    sha256: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(FileStat("", self.size, self.mtime))


def split_contents(wh: Warehouse, inbox: Path, code_version: str) -> dict[str, SplitFile]:
    """Inbox file (path relative to `inbox`) -> what was registered of it, for each file whose content
    `scene_clips` has hashed and split with `code_version`."""
    if not (wh.has_table(CLIPS.name) and wh.has_table(RAW_VIDEOS.name)):
        return {}
    rows = wh.query(
        "SELECT r.raw_video_id, r.path, r.file_size, r.mtime, r.sha256 FROM raw_videos r WHERE r.sha256 IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM clips c WHERE c.raw_video_id = r.raw_video_id AND c.source_sha256 = r.sha256 "
        "AND c.code_version = ?)", [code_version])
    root = inbox.resolve()
    out = {}
    for r in rows:
        try:
            rel = resolve(r["path"]).resolve().relative_to(root).as_posix()
        except ValueError:
            continue  # registered from another inbox folder
        out[rel] = SplitFile(r["raw_video_id"], r["file_size"], r["mtime"], r["sha256"])
    return out


def split_files(wh: Warehouse, inbox: Path, code_version: str) -> dict[str, tuple[str, str]]:
    """Inbox file (path relative to `inbox`) -> (its fingerprint (size and mtime) when registered, its partition
    key), for each file whose content `scene_clips` has hashed and split with `code_version`. A file that still
    has that size and mtime holds that content: the sensor reads no bytes of it (a tick must stay short)."""
    return {rel: (f.fingerprint, f.key) for rel, f in split_contents(wh, inbox, code_version).items()}


CONTENT_CHECK_BUDGET_S = 20.0  # hashing per sensor tick (Dagster gives a sensor evaluation 60 s); the rest waits
CHECKING = "checking whether its content is the one already split (a moved, copied or restored file)"


@dataclass
class Recognised:
    done: dict[str, tuple[str, str]] = field(default_factory=dict)  # rel -> (its fingerprint now, its key)
    waiting: dict[str, str] = field(default_factory=dict)  # rel -> why it is not decided yet (budget spent)
    hashed: dict[str, list] = field(default_factory=dict)  # rel -> [fingerprint, sha256]: the checks to remember


def recognise_by_content(files: Iterable[FileStat], split: Mapping[str, SplitFile], inbox: Path,
                         picked: Mapping[str, str | None], hashed: Mapping[str, list],
                         budget_s: float = CONTENT_CHECK_BUDGET_S, hasher: Callable[[Path], str] = file_sha256,
                         clock: Callable[[], float] = time.monotonic) -> Recognised:
    """Files whose size and mtime differ from what was registered but whose bytes are the content already split:
    a data folder copied or restored without its mtimes (`cp -r`, a backup), or a file touched. Only a file of the
    registered size is read (another size is other content), one not yet picked up with its present fingerprint
    (`picked`: the sensor state's), and one whose hash for this fingerprint is not in `hashed` (the checks of
    earlier ticks). Hashing stops once `budget_s` is spent (always after at least one file); the files left wait
    for the next tick, so no run is requested for content that may be known."""
    out = Recognised()
    start, read = clock(), 0
    for f in files:
        known = split.get(f.rel_path)
        fp = fingerprint(f)
        if f.passed_over or known is None or fp == known.fingerprint or f.size != known.size:
            continue
        if picked.get(f.rel_path) == fp:
            continue  # requested (or recognised) with this content already
        prev = hashed.get(f.rel_path)
        if prev and prev[0] == fp:
            sha = prev[1]
        elif read and clock() - start >= budget_s:
            out.waiting[f.rel_path] = CHECKING
            continue
        else:
            sha, read = hasher(inbox / f.rel_path), read + 1
        out.hashed[f.rel_path] = [fp, sha]
        if sha == known.sha256:
            out.done[f.rel_path] = (fp, known.key)
    return out


def probed_clips(wh: Warehouse, code_version: str, after: tuple[str, str] | None = None) -> dict[str, str]:
    """Kept clip -> its content hash, for each clip whose `video_probe` row has that hash and `code_version`
    (the per-clip run's first step). With `after` = (table, code version), only clips whose row in that table has
    this code version and was written after the probe (the MLLM caption of the full per-clip run)."""
    if not (wh.has_table(CLIPS.name) and wh.has_table(VIDEO_PROBE.name)):
        return {}
    sql = ("SELECT c.video_id, c.sha256 FROM clips c JOIN video_probe p ON p.video_id = c.video_id "
           "AND p.sha256 = c.sha256 AND p.code_version = ? WHERE c.kept")
    params: list = [code_version]
    if after is not None:
        table, version = after
        if not wh.has_table(table):
            return {}
        sql += (f' AND EXISTS (SELECT 1 FROM "{table}" t WHERE t.video_id = c.video_id AND t.code_version = ? '
                "AND t.materialized_at >= p.materialized_at)")
        params.append(version)
    return {r["video_id"]: r["sha256"] for r in wh.query(sql, params)}
