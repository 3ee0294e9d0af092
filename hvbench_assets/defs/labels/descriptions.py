"""L4 appearance, L5 facial_description, L11 video_caption: MLLM descriptions of tracks and clips.

Each asset's code_version holds the fingerprint of its prompt (core/mllm/prompts.py) and of the
describer model, so editing one prompt or switching the model marks exactly those assets stale.
Runs share the Dagster concurrency pool "mllm" (limit it in dagster.yaml); within a run the
client bounds in-flight requests per model and retries 429/5xx/timeouts with backoff, so the
assets carry no Dagster RetryPolicy: a partition that still fails was down for minutes, and its
rerun pays only for the calls that are not cached yet. A 401/403, a wrong route or missing local
weights fail the step at once with `allow_retries=False`, naming the setting to fix.
"""

from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.tables import ClipNotFound, load_clip
from hvbench_assets.core.mllm import ModelNotConfigured, ModelSpec
from hvbench_assets.core.mllm.descriptions import (
    APPEARANCE,
    FACIAL_DESCRIPTION,
    TRACK_LABELS,
    VIDEO_CAPTION,
    VIDEO_CAPTION_TABLE,
    BadCropClip,
    DescriberMisconfigured,
    DescriptionsIncomplete,
    code_version,
    describe_tracks,
    describe_video,
    preview_markdown,
)
from hvbench_assets.core.media import MediaError
from hvbench_assets.core.media.paths import resolve, to_stored
from hvbench_assets.core.media.run_folders import remove_replaced, run_folder
from hvbench_assets.core.vision.pipeline import body_clips
from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES, HUMAN_TRACKS
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, per_clip
from hvbench_assets.defs.labels.inputs import required_rows
from hvbench_assets.defs.metadata import paths, table_schema
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import MllmResource, SettingsResource, WarehouseResource, configured_describer
from hvbench_assets.defs.run_tags import run_in_progress


_DESCRIBER = configured_describer()
APPEARANCE_VERSION = code_version("l4.2", APPEARANCE, _DESCRIBER)  # l4.2: cuts the body-crop clips L1 did not write
FACIAL_DESCRIPTION_VERSION = code_version("l5.1", FACIAL_DESCRIPTION, _DESCRIBER)
VIDEO_CAPTION_VERSION = code_version("l11.1", VIDEO_CAPTION, _DESCRIBER)


def _describer(mllm: MllmResource) -> ModelSpec:
    try:
        return mllm.describer()
    except ModelNotConfigured as exc:
        raise dg.Failure(description=f"no MLLM endpoint for descriptions: {exc}", allow_retries=False) from exc


def _usage_metadata(results) -> dict:
    return {
        "calls": len(results),
        "requests_sent": sum(r.attempts for r in results),
        "cached": sum(r.cached for r in results),
        "tokens_in": sum(r.tokens_in or 0 for r in results),
        "tokens_out": sum(r.tokens_out or 0 for r in results),
    }


def _track_asset(label: str, version: str):
    prompt, table, path_column = TRACK_LABELS[label]
    crop = "body" if path_column == "body_clip_path" else "face"

    @dg.asset(
        name=label,
        partitions_def=videos_partitions,
        backfill_policy=CLIP_BACKFILL_POLICY,
        deps=["human_tracks"],
        group_name="labels",
        kinds={"openai", "duckdb"},
        code_version=version,
        pool="mllm",
        description=f"{'L4' if crop == 'body' else 'L5'}: MLLM description of each track's {crop}-cropped clip",
        metadata={"prompt_hash": prompt.fingerprint, "table": table.name, "dagster/column_schema": table_schema(table)},
    )
    @per_clip
    def _asset(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
               mllm: MllmResource) -> dg.MaterializeResult:
        video_id = context.partition_key
        wh = warehouse.get()
        tracks = required_rows(wh, HUMAN_TRACKS, video_id, order_by="track_id")
        spec = _describer(mllm)
        media = settings.media_dir(video_id) / label
        cut = run_folder(media, context.run_id) if crop == "body" else None
        if cut is not None:
            tracks = _with_body_clips(wh, video_id, tracks, cut)
        client = mllm.client(wh)
        try:
            rows, results = describe_tracks(client, spec, label, video_id, tracks)
        except DescriptionsIncomplete as exc:
            raise dg.Failure(description=f"{label} of {video_id}: {exc}") from exc
        except DescriberMisconfigured as exc:
            raise dg.Failure(description=f"{label} of {video_id}: {exc}", allow_retries=False) from None
        except BadCropClip as exc:
            raise dg.Failure(description=f"{label} of {video_id}: {exc}", allow_retries=False) from exc
        for r in results:
            if not r.ok:
                context.log.warning(f"{label} call {r.call_id[:12]} failed: {r.error}")
        wh.replace(table, {"video_id": video_id}, rows,
                   provenance={"backend": spec.backend, "model": spec.provenance_model, "code_version": version})
        if cut is not None:  # the rows name this run's cuts now (committed, also in a batch)
            wh.commit_held()
            remove_replaced(media, cut, lambda run_id: run_in_progress(context.instance, run_id))
        statuses = {s: sum(r["status"] == s for r in rows) for s in sorted({r["status"] for r in rows})}
        return dg.MaterializeResult(metadata={
            "rows": len(rows), "statuses": dg.MetadataValue.json(statuses),
            "model": f"{spec.name} ({spec.provenance_model})",
            "prompt_hash": prompt.fingerprint, **_usage_metadata(results),
            "call_ids": dg.MetadataValue.json([r.call_id for r in results]),
            "preview": dg.MetadataValue.md(preview_markdown(rows)),
        })

    return _asset


def _with_body_clips(wh, video_id: str, tracks: list[dict], out_dir: Path) -> list[dict]:
    """Tracks whose body-crop clip L1 did not write (its run had no L4) or that is gone get one cut now from the
    clip and the track's stored boxes (a track without boxes stays without a clip: its row says so)."""
    todo = [t for t in tracks if t.get("status") == "ok" and t.get("track_id") is not None
            and not (t.get("body_clip_path") and resolve(t["body_clip_path"]).exists())]
    if not todo:
        return tracks
    stored = wh.rows(HUMAN_TRACK_BOXES, video_id=video_id)  # one read for every track
    boxes = {t["track_id"]: [r for r in stored if r["track_id"] == t["track_id"]] for t in todo}
    try:
        cut = body_clips(load_clip(wh, video_id).path, boxes, out_dir, todo[0]["fps"]) if any(boxes.values()) else {}
    except (ClipNotFound, MediaError) as exc:
        raise dg.Failure(description=f"appearance of {video_id}: cannot cut body-crop clips: {exc}") from exc
    return [{**t, "body_clip_path": to_stored(cut[t["track_id"]]) if t.get("track_id") in cut else t.get("body_clip_path")}
            for t in tracks]


appearance = _track_asset("appearance", APPEARANCE_VERSION)
facial_description = _track_asset("facial_description", FACIAL_DESCRIPTION_VERSION)


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=["video_probe"],
    group_name="labels",
    kinds={"openai", "duckdb"},
    code_version=VIDEO_CAPTION_VERSION,
    pool="mllm",
    description="L11: MLLM summary of the clip's setting, people and events (context for questions)",
    metadata={"prompt_hash": VIDEO_CAPTION.fingerprint, "table": VIDEO_CAPTION_TABLE.name,
              "dagster/column_schema": table_schema(VIDEO_CAPTION_TABLE)},
)
@per_clip
def video_caption(context: dg.AssetExecutionContext, warehouse: WarehouseResource, mllm: MllmResource) -> dg.MaterializeResult:
    video_id = context.partition_key
    wh = warehouse.get()
    try:
        clip = load_clip(wh, video_id)
    except ClipNotFound as exc:
        raise dg.Failure(description=str(exc)) from exc
    spec = _describer(mllm)
    try:
        row, result = describe_video(mllm.client(wh), spec, video_id, clip.path, clip.has_audio)
    except DescriptionsIncomplete as exc:
        raise dg.Failure(description=f"video_caption of {video_id} ({clip.path}): {exc}") from exc
    except DescriberMisconfigured as exc:
        raise dg.Failure(description=f"video_caption of {video_id}: {exc}", allow_retries=False) from None
    except BadCropClip as exc:
        raise dg.Failure(description=f"video_caption of {video_id} ({clip.path}): {exc}", allow_retries=False) from exc
    if not result.ok:
        context.log.warning(f"video_caption call {result.call_id[:12]} failed: {result.error}")
    wh.replace(VIDEO_CAPTION_TABLE, {"video_id": video_id}, [row],
               provenance={"backend": spec.backend, "model": spec.provenance_model,
                           "code_version": VIDEO_CAPTION_VERSION})
    return dg.MaterializeResult(metadata={
        "status": row["status"], "model": f"{spec.name} ({spec.provenance_model})",
        "prompt_hash": VIDEO_CAPTION.fingerprint,
        **paths(clip=clip.path), **_usage_metadata([result]), "call_id": result.call_id,
        "preview": dg.MetadataValue.md(preview_markdown([row], key=None, width=600)),
    })
