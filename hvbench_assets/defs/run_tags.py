"""The source file and time range of a partition as tags, added by the assets themselves.

The sensors tag the runs they request (`hvbench/source`, `hvbench/range`, defs/ingest/sensors.py); a run
launched from the UI, a backfill or a re-execution has only `dagster/partition`. Dagster 1.13 has no public
API for an op to set its run's tags (dagster-io/dagster#27502), so each tagging asset (scene_clips,
video_probe, every task asset) does two things: it adds the missing tags to its run through
`DagsterInstance.add_run_tags` (what the UI's tag editor calls; tags already set are kept), so the Runs page
filter `hvbench/source=<file>` finds the run whoever launched it; and it returns them as materialization tags,
so the asset's event names its source even where the run tag could not be written.

A run over clips of several files (a clip_sensor batch, a backfill's range run) cannot name them all in
`hvbench/source`: Dagster's run filter matches one value per tag key exactly (RunsFilter, GraphQL
`runsOrError(filter: {tags})`, the Runs page's Tag filter). So every run also carries one tag per file it
touches, `hvbench/file/<raw_videos key>` = `<file>`: the key is the file's partition key (a slug of its name,
`[a-z0-9_-]`, so the UI's key search finds it by part of the name and no `=` breaks its `key=value` tokens), and
the filter `hvbench/file/<key>=<file>` lists every run that touched the file, batches included
(`hvbench runs --file FILE` prints it). `hvbench/source` stays on runs of one file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.runtime.batch import is_batch

SOURCE_TAG = "hvbench/source"
RANGE_TAG = "hvbench/range"
FILE_TAG_PREFIX = "hvbench/file/"  # + the file's raw_videos key; value: the file, as `hvbench/source` names it
MAX_TAG_VALUE = 250


def file_tag_key(raw_video_id: str) -> str:
    return FILE_TAG_PREFIX + raw_video_id


def source_tags(inbox: Path, path: str | None, start_s: float | None = None, end_s: float | None = None,
                raw_video_id: str | None = None) -> dict:
    """Run tags naming the inbox file (as the raw file's own run names it), its per-file tag when its key is
    given, and the clip's time range, so the Runs page filters every run of one source with
    `hvbench/source=<file>` (or `hvbench/file/<key>=<file>`, which also finds batches over several files)."""
    tags = {SOURCE_TAG: inbox_relative(inbox, path)[:MAX_TAG_VALUE]} if path else {}
    if path and raw_video_id:
        tags[file_tag_key(raw_video_id)] = tags[SOURCE_TAG]
    if start_s is not None and end_s is not None:
        tags[RANGE_TAG] = f"{start_s:.2f}-{end_s:.2f}s"
    return tags


def files_tags(inbox: Path, files: Iterable[tuple[str | None, str | None]]) -> dict[str, str]:
    """The tags of a run over clips of `files` ((raw_video_id, stored path) each): one `hvbench/file/<key>` tag
    per file, and `hvbench/source` when they are all one file."""
    tags: dict[str, str] = {}
    for raw_video_id, path in files:
        if raw_video_id and path:
            tags[file_tag_key(raw_video_id)] = inbox_relative(inbox, path)[:MAX_TAG_VALUE]
    sources = set(tags.values())
    if len(sources) == 1 and all(raw and path for raw, path in files):
        tags[SOURCE_TAG] = sources.pop()
    return tags


def file_filter(raw_video_id: str, file: str) -> dict[str, str]:
    """The run filter (tag key -> value) that lists every run touching one file."""
    return {file_tag_key(raw_video_id): file[:MAX_TAG_VALUE]}


def inbox_relative(inbox: Path, path: str) -> str:
    """A stored raw-video path relative to the inbox."""
    try:
        return resolve(path).resolve().relative_to(inbox.resolve()).as_posix()
    except ValueError:
        return path  # registered from another inbox folder: keep the key reserved anyway


def run_in_progress(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Whether run `run_id` may still commit rows naming its run folder's files (core/media/run_folders.py)."""
    run = instance.get_run_by_id(run_id)
    return run is not None and not run.is_finished


_RUN_MEMO: dict[str, dict] = {}  # this process's current run -> what it already read or wrote (see below)


def _run_memo(run_id: str) -> dict:
    """Per-run memo of this process (runs do not share it: a new run id clears it)."""
    if run_id not in _RUN_MEMO:
        _RUN_MEMO.clear()
    return _RUN_MEMO.setdefault(run_id, {"sources": {}, "added": {}})


def clip_source_tags(wh: Warehouse, inbox, video_id: str, run_id: str | None = None) -> dict[str, str]:
    """`hvbench/source` and `hvbench/range` of one clip ({} when the clip is unknown). With `run_id`, read once per
    run and process: a clip's file and range do not change, and every task step of a batch asked again (an opening
    of the warehouse per clip and step)."""
    if run_id is None:
        return _clip_source_tags(wh, inbox, video_id)
    memo = _run_memo(run_id)["sources"]
    key = (str(wh.path), str(inbox), video_id)
    if key not in memo:
        memo[key] = _clip_source_tags(wh, inbox, video_id)
    return dict(memo[key])


def _clip_source_tags(wh: Warehouse, inbox, video_id: str) -> dict[str, str]:
    with wh.batch():  # three quick reads: one opening of the file
        if not wh.has_table(CLIPS.name) or not wh.has_table(RAW_VIDEOS.name):
            return {}
        rows = wh.query("SELECT c.raw_video_id, c.start_s, c.end_s, r.path FROM clips c "
                        "LEFT JOIN raw_videos r USING (raw_video_id) WHERE c.video_id = ?", [video_id])
    return source_tags(inbox, rows[0]["path"], rows[0]["start_s"], rows[0]["end_s"],
                       rows[0]["raw_video_id"]) if rows else {}


def raw_source_tags(wh: Warehouse, inbox, raw_video_id: str) -> dict[str, str]:
    if not wh.has_table(RAW_VIDEOS.name):
        return {}
    rows = wh.rows(RAW_VIDEOS, raw_video_id=raw_video_id)
    return source_tags(inbox, rows[0]["path"], raw_video_id=raw_video_id) if rows else {}


EVENT_TAG_VALUE = re.compile(r"^[A-Za-z0-9_.-]{0,63}$")  # Dagster's rule for asset-event tags (run tags are free)


def tag_run(context: dg.AssetExecutionContext, tags: dict[str, str]) -> dict[str, str]:
    """Add the tags the run lacks (never overwrite a sensor's); returns the tags an asset event may carry (a file
    name with spaces or accents, `Café – 1.mp4`, is a valid run tag but not an event tag: it stays on the run;
    the per-file tags stay on the run too). In a multi-clip run the run gets every clip's file tag, and the source
    file once every clip of the step named the same one."""
    if is_batch(context):
        _tag_batch_run(context, tags)
    else:
        _add_missing(context, tags)
    return {k: v for k, v in tags.items() if not k.startswith(FILE_TAG_PREFIX) and EVENT_TAG_VALUE.match(v)}


_BATCH_SOURCES: dict[tuple[str, str], list[dict[str, str]]] = {}  # (run, step) -> its clips' tags so far


def _tag_batch_run(context, tags: dict[str, str]) -> None:
    """A batch's run gets one `hvbench/file/<key>` tag per file its clips come from (added at the first clip of
    each file, so a later clip's failure cannot lose it), and names its source when all its clips share one file,
    as clip_sensor's batches are tagged; a backfill's range runs get them here. The source is decided at the
    step's last clip (a clip that failed before this call leaves it off)."""
    step = (context.run_id, context.assets_def.key.to_user_string())
    seen = _BATCH_SOURCES.setdefault(step, [])
    new = {k: v for k, v in tags.items() if k.startswith(FILE_TAG_PREFIX) and not any(k in t for t in seen)}
    seen.append(tags)
    if new:
        _add_missing(context, new)
    keys = context.batch_keys
    if context.partition_key != keys[-1]:
        return
    del _BATCH_SOURCES[step]
    sources = [t.get(SOURCE_TAG) for t in seen]
    if len(seen) == len(keys) and sources[0] and len(set(sources)) == 1:
        _add_missing(context, {SOURCE_TAG: sources[0]})


def _add_missing(context, tags: dict[str, str]) -> None:
    # context.run holds the tags of the run's start: those this process added since are remembered, not re-added
    # (a write to the run storage per clip and task step)
    added = _run_memo(context.run_id)["added"]
    missing = {k: v for k, v in tags.items() if k not in context.run.tags and added.get(k) != v}
    if missing:
        try:
            context.instance.add_run_tags(context.run_id, missing)
            added.update(missing)
        except Exception as exc:  # an instance that refuses: the materialization tags still carry them
            context.log.warning(f"could not tag run {context.run_id} with {missing}: {exc}")
