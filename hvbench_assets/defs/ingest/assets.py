"""Ingest stage: raw file -> single-shot clips (registered as `videos` partitions) -> probe."""


import shutil
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.keys import clip_key
from hvbench_assets.core.ingest.split import split_video
from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE
from hvbench_assets.core.media import MediaError, file_sha256, probe_video
from hvbench_assets.core.media.paths import resolve, to_stored
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, per_clip
from hvbench_assets.defs.metadata import materialization, paths, row_counts, table_definition
from hvbench_assets.defs.partitions import raw_videos_partitions, videos_partitions
from hvbench_assets.defs.resources import SettingsResource, WarehouseResource
from hvbench_assets.defs.run_tags import clip_source_tags, raw_source_tags, tag_run

SCENE_CLIPS_VERSION = "2"  # 2: one decode per file, Data-Juicer's motion scale, streams' own start times
VIDEO_PROBE_VERSION = "2"  # 2: frames counted by demuxing (decoded only when demux and header disagree)


def raw_video_path(settings: SettingsResource, warehouse: WarehouseResource, raw_video_id: str) -> Path:
    rows = warehouse.get().rows(RAW_VIDEOS, raw_video_id=raw_video_id)
    if not rows:
        raise dg.Failure(
            description=f"raw video {raw_video_id!r} is not registered: drop the file into {settings.inbox} "
            "and let `inbox_sensor` pick it up (it registers the path)"
        )
    path = resolve(rows[0]["path"])
    if not path.exists():
        raise dg.Failure(description=f"{path}: file no longer exists (raw video {raw_video_id!r})")
    return path


@dg.asset(
    partitions_def=raw_videos_partitions,
    group_name="ingest",
    kinds={"video", "duckdb"},
    code_version=SCENE_CLIPS_VERSION,
    pool="cpu",  # CPU-heavy: across runs at most one per core (runtime/executor.py)
    metadata=table_definition(CLIPS, RAW_VIDEOS),
    description="Shots of one raw video, long shots windowed, basic filters applied; kept ones become `videos` partitions",
)
def scene_clips(
    context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    raw_id = context.partition_key
    wh = warehouse.get()
    src = raw_video_path(settings, warehouse, raw_id)
    out_dir = settings.clips_dir / raw_id
    out_dir.mkdir(parents=True, exist_ok=True)
    try:  # one decode of the file: shots, motion and the clips themselves
        header = probe_video(src, count_frames=False)
        split = split_video(src, header, settings.clip_filter(), lambda i: out_dir / f"{clip_key(raw_id, i)}.mp4")
    except MediaError as exc:
        raise dg.Failure(description=str(exc)) from exc
    scenes = split.analysis
    rows, kept_keys = [], []
    for seg in scenes.segments:
        key = clip_key(raw_id, seg.index)
        clip_path = out_dir / f"{key}.mp4"
        sha = None
        if seg.kept:
            sha = file_sha256(clip_path)
            kept_keys.append(key)
        rows.append({
            "raw_video_id": raw_id, "clip_index": seg.index, "video_id": key if seg.kept else None,
            "start_s": seg.start_s, "end_s": seg.end_s, "duration_s": round(seg.duration_s, 3),
            "kept": seg.kept, "reason": seg.reason, "motion_score": seg.motion, "width": scenes.width,
            "height": scenes.height, "clip_path": to_stored(clip_path) if seg.kept else None, "sha256": sha,
            "source_sha256": header.sha256,
        })
    previous = {r["video_id"] for r in wh.rows(CLIPS, raw_video_id=raw_id) if r["video_id"]}
    registry = wh.rows(RAW_VIDEOS, raw_video_id=raw_id)[0]
    wh.replace_tables([
        (CLIPS, {"raw_video_id": raw_id}, rows,
         {"backend": "signal", "model": "hsv-content-cuts+farneback-motion", "code_version": SCENE_CLIPS_VERSION}),
        (RAW_VIDEOS, {"raw_video_id": raw_id}, [{**registry, "sha256": header.sha256, "file_size": header.file_size}], None),
    ])
    instance = context.instance
    existing = set(instance.get_dynamic_partitions(videos_partitions.name))
    instance.add_dynamic_partitions(videos_partitions.name, [k for k in kept_keys if k not in existing])
    for stale in sorted(previous - set(kept_keys)):  # the file changed and this clip no longer exists
        if stale in existing:
            instance.delete_dynamic_partition(videos_partitions.name, stale)
        wh.forget_video(stale)  # its labels too: nothing downstream may read a clip that is gone
        (out_dir / f"{stale}.mp4").unlink(missing_ok=True)
        shutil.rmtree(settings.data_path("media", stale), ignore_errors=True)
        context.log.info(f"clip {stale} no longer exists after the re-split: partition, rows and media removed")
    table = "\n".join(
        f"| {r['clip_index']} | {r['start_s']:.2f}-{r['end_s']:.2f} | {'kept' if r['kept'] else 'dropped'} | {r['reason']} |"
        for r in rows
    )
    tags = tag_run(context, raw_source_tags(wh, settings.inbox, raw_id))
    return dg.MaterializeResult(tags=tags, metadata=materialization({
        **row_counts(wh, CLIPS, len(rows)),
        **paths(source=src),
        "duration_s": scenes.duration_s,
        "shot_cuts_s": dg.MetadataValue.json(scenes.cuts_s),
        "clips_written": dg.MetadataValue.json({clip_key(raw_id, i): how for i, how in split.how.items()}),
        "clips_total": len(rows),
        "clips_kept": len(kept_keys),
        "kept_clip_ids": dg.MetadataValue.json(kept_keys),
        "clips": dg.MetadataValue.md("| # | range (s) | decision | reason |\n|---|---|---|---|\n" + table),
    }))


def clip_file(warehouse: WarehouseResource, video_id: str) -> Path:
    wh = warehouse.get()
    rows = wh.query("SELECT clip_path FROM clips WHERE video_id = ? AND kept", [video_id]) if wh.has_table(CLIPS.name) else []
    if not rows:
        raise dg.Failure(description=f"clip {video_id!r} is unknown: it is created by `scene_clips` of its raw video")
    return resolve(rows[0]["clip_path"])


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    # no `deps=[scene_clips]`: the two assets have different partition sets and Dagster would map
    # clip `x__000` to a raw video `x__000` that does not exist; the clip's source is in its metadata
    group_name="ingest",
    kinds={"video", "duckdb"},
    code_version=VIDEO_PROBE_VERSION,
    metadata=table_definition(VIDEO_PROBE),
    description="Container facts of one clip: duration, fps, frames, size, codecs, audio stream, hash",
)
@per_clip
def video_probe(context: dg.AssetExecutionContext, settings: SettingsResource,
                warehouse: WarehouseResource) -> dg.MaterializeResult:
    video_id = context.partition_key
    wh = warehouse.get()
    path = clip_file(warehouse, video_id)
    # before the probe: a run that read a corrupt clip touched its file too (the Runs page filter by file finds it)
    tags = tag_run(context, clip_source_tags(wh, settings.inbox, video_id, context.run_id))
    prov = {"backend": "pyav", "model": "ffmpeg", "code_version": VIDEO_PROBE_VERSION}
    try:
        probe = probe_video(path)
    except MediaError as exc:
        wh.replace(VIDEO_PROBE, {"video_id": video_id},
                   [{"status": "failed", "reason": exc.reason, "path": to_stored(path)}], provenance=prov)
        raise dg.Failure(description=str(exc), metadata={**paths(path=path), "reason": exc.reason}) from exc
    wh.replace(VIDEO_PROBE, {"video_id": video_id}, [{**probe.as_row(), "path": to_stored(path), "status": "ok", "reason": None}], provenance=prov)
    source = wh.query("SELECT c.raw_video_id, c.start_s, c.end_s, r.path FROM clips c "
                      "LEFT JOIN raw_videos r USING (raw_video_id) WHERE c.video_id = ?", [video_id])[0]
    return dg.MaterializeResult(data_version=dg.DataVersion(probe.sha256[:16]), tags=tags, metadata=materialization({
        **row_counts(wh, VIDEO_PROBE, 1),
        **paths(path=path, source=resolve(source["path"])),
        "source_partition": f"raw_videos/{source['raw_video_id']}",
        "source_range_s": f"{source['start_s']:.2f}-{source['end_s']:.2f}",
        "duration_s": probe.duration_s,
        "fps": probe.fps,
        "frame_count": probe.frame_count,
        "size": f"{probe.width}x{probe.height}",
        "video_codec": probe.video_codec,
        "audio": f"{probe.audio_codec} {probe.audio_sample_rate} Hz x{probe.audio_channels}" if probe.has_audio else "none",
        "file_size": probe.file_size,
    }))
