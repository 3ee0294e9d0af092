"""Sensors: the inbox folder -> `raw_videos` runs; newly cut clips -> `videos` runs."""


import datetime as dt
import hashlib
import time
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.batches import clip_batches
from hvbench_assets.core.ingest.done import probed_clips, recognise_by_content, split_contents
from hvbench_assets.core.ingest.inbox import list_inbox, scan
from hvbench_assets.core.ingest.tables import CLIPS, INBOX_SKIPS, RAW_VIDEOS
from hvbench_assets.core.media.paths import relative_to_root, resolve, to_stored
from hvbench_assets.core.mllm.descriptions import VIDEO_CAPTION_TABLE
from hvbench_assets.core.mllm.registry import ModelNotConfigured
from hvbench_assets.runtime.batch import BATCH_MAX, BATCH_TAG, SHORT_CLIP_S, range_tags
from hvbench_assets.defs.ingest.assets import SCENE_CLIPS_VERSION, VIDEO_PROBE_VERSION
from hvbench_assets.defs.ingest.jobs import (
    clip_labels_job,
    clip_offline_labels_job,
    raw_video_job,
)
from hvbench_assets.defs.labels.descriptions import VIDEO_CAPTION_VERSION
from hvbench_assets.defs.partitions import raw_videos_partitions, videos_partitions
from hvbench_assets.defs.resources import MllmResource, SettingsResource, WarehouseResource
from hvbench_assets.defs.run_tags import (MAX_TAG_VALUE, SOURCE_TAG, file_tag_key, files_tags, inbox_relative,
                                         source_tags)
from hvbench_assets.defs.sensor_state import load_state, save_state


@dg.sensor(
    job=raw_video_job,
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds a `raw_videos` partition per settled inbox file and requests its run; re-runs changed files",
)
def inbox_sensor(context: dg.SensorEvaluationContext, settings: SettingsResource, warehouse: WarehouseResource):
    state = load_state(context, "inbox_sensor", {})
    inbox = settings.inbox
    inbox.mkdir(parents=True, exist_ok=True)
    wh = warehouse.get()
    registry = {r["raw_video_id"]: r for r in wh.rows(RAW_VIDEOS)}
    # keys given before (the registry outlives a reset cursor or a new Dagster home) stay with their files
    known = {str(resolve(r["path"]).resolve()): k for k, r in registry.items()}
    state.setdefault("keys", {}).update({k: inbox_relative(inbox, r["path"]) for k, r in registry.items()})
    for rel, entry in state.setdefault("files", {}).items():
        entry.setdefault("key", known.get(str((inbox / rel).resolve())))
    files = list_inbox(inbox, settings.inbox_roots)
    # content already split is recognised by its bytes when its size and mtime changed but its path did not (a data
    # folder copied or restored without its mtimes): its registered mtime is brought up to date, nothing runs
    split = split_contents(wh, inbox, SCENE_CLIPS_VERSION)
    copies = recognise_by_content(files, split, inbox, picked={r: e.get("picked") for r, e in state["files"].items()},
                                  hashed=state.get("hashed", {}))
    for rel, (_fp, key) in copies.done.items():
        f = next(f for f in files if f.rel_path == rel)
        if key in registry:
            wh.replace(RAW_VIDEOS, {"raw_video_id": key}, [{**registry[key], "mtime": f.mtime}])
        context.log.info(f"{rel}: same content as raw_videos/{key} (sha256), already split: nothing to run")
    result = scan(files, state, now=time.time(), settle_s=settings.inbox_settle_s,
                  done={**{rel: (f.fingerprint, f.key) for rel, f in split.items()}, **copies.done},
                  waiting=copies.waiting)
    listed = {f.rel_path for f in files}
    hashed = {**{r: h for r, h in state.get("hashed", {}).items() if r in listed}, **copies.hashed}
    result.state["hashed"] = {r: h for r, h in hashed.items() if r not in copies.done}
    for path, reason in result.skipped:
        context.log.info(f"passed over {path}: {reason}")
    if result.state["skips"] != state.get("skips"):  # `hvbench status` lists what is passed over now
        record_skips(wh, inbox, result.state["skips"])
    existing = set(context.instance.get_dynamic_partitions(raw_videos_partitions.name))
    # the registry is the record of files: an instance that never saw them (a new DAGSTER_HOME) gets them now
    new_keys = sorted(set(registry) - existing)
    if not result.pickups:
        return dg.SensorResult(
            cursor=save_state(context, "inbox_sensor", result.state), skip_reason="no new or changed settled files",
            dynamic_partitions_requests=[raw_videos_partitions.build_add_request(new_keys)] if new_keys else [])
    if relative_to_root(inbox) is None:
        context.log.warning(f"inbox {inbox} lies outside the data root {settings.data_dir}: raw video paths are "
                            "stored absolute, so every node must mount the inbox at that same path")
    runs = []
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    for p in result.pickups:
        path = inbox / p.rel_path
        old = registry.get(p.raw_video_id, {})
        # the content hash is taken by scene_clips, not here: a sensor tick must stay short
        wh.replace(RAW_VIDEOS, {"raw_video_id": p.raw_video_id}, [{
            "path": to_stored(path.resolve()), "file_size": p.size, "mtime": p.mtime, "sha256": None,
            "first_seen": old.get("first_seen") or now,
        }])
        if p.raw_video_id not in existing and p.raw_video_id not in new_keys:
            new_keys.append(p.raw_video_id)
        context.log.info(f"{'changed' if p.changed else 'new'} file {p.rel_path} -> raw_videos/{p.raw_video_id}")
        runs.append(dg.RunRequest(partition_key=p.raw_video_id, run_key=f"{p.raw_video_id}:{p.fingerprint}",
                                  tags={SOURCE_TAG: p.rel_path[:MAX_TAG_VALUE],
                                        file_tag_key(p.raw_video_id): p.rel_path[:MAX_TAG_VALUE]}))
    return dg.SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=[raw_videos_partitions.build_add_request(new_keys)] if new_keys else [],
        cursor=save_state(context, "inbox_sensor", result.state),
    )


def record_skips(wh, inbox: Path, skips: dict) -> None:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    key = to_stored(inbox)
    before = {r["path"]: r for r in wh.rows(INBOX_SKIPS, inbox=key)} if wh.has_table(INBOX_SKIPS.name) else {}
    rows = [{"path": path, "reason": reason,
             "noticed_at": before[path]["noticed_at"] if before.get(path, {}).get("reason") == reason else now}
            for path, (reason, _fp) in sorted(skips.items())]
    if key != str(inbox) and wh.has_table(INBOX_SKIPS.name):  # rows of a warehouse that stored it absolute
        wh.execute(f'DELETE FROM "{INBOX_SKIPS.name}" WHERE inbox = ?', [str(inbox)])
    wh.replace(INBOX_SKIPS, {"inbox": key}, rows)


def describer_configured(mllm: MllmResource) -> str | None:
    """None when an MLLM describer is reachable by configuration, else what is missing."""
    try:
        mllm.describer()
        return None
    except ModelNotConfigured as exc:
        return str(exc)


@dg.sensor(
    jobs=[clip_labels_job, clip_offline_labels_job],
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests the per-clip label run for every kept clip whose content is new or changed "
    "(without the MLLM descriptions while no describer model is configured); short clips that follow each other "
    "in one run over their key range",
)
def clip_sensor(context: dg.SensorEvaluationContext, settings: SettingsResource, warehouse: WarehouseResource,
                mllm: MllmResource):
    requested: dict = load_state(context, "clip_sensor", {})  # video_id -> "<sha256>:<job>" requested
    wh = warehouse.get()
    if not wh.has_table(CLIPS.name):
        return dg.SkipReason("no clips yet")
    rows = wh.query("SELECT c.video_id, c.raw_video_id, c.sha256, c.start_s, c.end_s, r.path FROM clips c "
                    "LEFT JOIN raw_videos r USING (raw_video_id) WHERE c.kept ORDER BY c.video_id")
    inbox = settings.inbox
    missing = describer_configured(mllm)
    job = clip_offline_labels_job if missing else clip_labels_job
    # whatever the state remembers: clips whose rows exist for this content and code version (for the full job
    # also the caption, its MLLM part) are done
    done = probed_clips(wh, VIDEO_PROBE_VERSION,
                        after=None if missing else (VIDEO_CAPTION_TABLE.name, VIDEO_CAPTION_VERSION))
    requested = {r["video_id"]: requested[r["video_id"]] for r in rows if r["video_id"] in requested}  # clips gone
    pending = {}
    for r in rows:
        vid, sha = r["video_id"], r["sha256"]
        # a clip labelled without descriptions is requested again once a describer is configured
        wanted = f"{sha}:{job.name}"
        if requested.get(vid) in (wanted, f"{sha}:{clip_labels_job.name}"):
            continue
        requested[vid] = wanted
        if done.get(vid) == sha:
            continue
        pending[vid] = r
    # the warehouse is the record of clips: an instance that never saw them (a new DAGSTER_HOME) gets them now
    known = context.instance.get_dynamic_partitions(videos_partitions.name)  # in the order they were added
    absent = sorted({r["video_id"] for r in rows} - set(known))
    partitions = [videos_partitions.build_add_request(absent)] if absent else []
    # short clips in batches (a run's fixed cost exceeds their labels' cost), longer ones one per run
    runs = []
    for batch in clip_batches([*known, *absent], {v: r["end_s"] - r["start_s"] for v, r in pending.items()},
                              BATCH_MAX, SHORT_CLIP_S):
        first = pending[batch[0]]
        if len(batch) == 1:
            runs.append(dg.RunRequest(partition_key=batch[0], job_name=job.name,
                                      run_key=f"{batch[0]}:{first['sha256'][:16]}:{job.name}",
                                      tags=source_tags(inbox, first["path"], first["start_s"], first["end_s"],
                                                       first["raw_video_id"])))
            continue
        contents = hashlib.sha256("".join(f"{v}:{pending[v]['sha256']};" for v in batch).encode()).hexdigest()
        # one tag per file of the batch (and `hvbench/source` when it is one file): found by each file's filter
        files = files_tags(inbox, [(pending[v]["raw_video_id"], pending[v]["path"]) for v in batch])
        runs.append(dg.RunRequest(job_name=job.name, run_key=f"{batch[0]}..{batch[-1]}:{contents[:16]}:{job.name}",
                                  tags={**range_tags(batch[0], batch[-1]), BATCH_TAG: str(len(batch)), **files}))
    cursor = save_state(context, "clip_sensor", requested)
    if not runs:
        return dg.SensorResult(cursor=cursor, skip_reason="no new clips", dynamic_partitions_requests=partitions)
    if missing:
        context.log.info(f"MLLM descriptions skipped for {len(runs)} clip(s): {missing}")
    return dg.SensorResult(run_requests=runs, cursor=cursor, dynamic_partitions_requests=partitions)
