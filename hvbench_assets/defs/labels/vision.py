"""L1-L3 vision labels per clip: human_tracks (with crop clips), human_verdicts, person_count, demographics, and
checks."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.tables import ClipNotFound, clip_seconds, load_clip
from hvbench_assets.core.media import MediaError
from hvbench_assets.core.media.paths import stored_columns
from hvbench_assets.core.media.run_folders import remove_replaced, run_folder
from hvbench_assets.core.mllm import ModelNotConfigured
from hvbench_assets.core.mllm.descriptions import describer_fingerprint
from hvbench_assets.core.mllm.prompts import REAL_HUMAN
from hvbench_assets.core.published_weights import WeightsUnavailable
from hvbench_assets.core.render.inline import inline_bytes
from hvbench_assets.core.render.keyframe import frame_people, render_key_frame
from hvbench_assets.core.tasks.calls import ModelUnreachable
from hvbench_assets.core.vision import (
    DEMOGRAPHICS,
    HUMAN_TRACK_BOXES,
    HUMAN_TRACKS,
    HUMAN_VERDICTS,
    PERSON_COUNT,
    load_tracks,
    number_tracks,
)
from hvbench_assets.core.vision.count import TrackSpan, count_people
from hvbench_assets.core.vision.demographics import demographics_rows
from hvbench_assets.core.vision.detectors import BackendUnavailable, YuNetFaceDetector
from hvbench_assets.core.vision.pipeline import track_video
from hvbench_assets.core.vision.realness import RealHumanParams, real_human_asker, verdict_rows
from hvbench_assets.core.vision.realness import version as realness_version
from hvbench_assets.runtime.batch import (CLIP_BACKFILL_POLICY, SPLIT_FRESH_TAG, SPLIT_TAG, per_clip, per_clip_check,
                                      run_plans)
from hvbench_assets.defs.labels.inputs import required_rows
from hvbench_assets.defs.metadata import image, materialization, paths, rounded, row_counts, table_definition
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.run_tags import run_in_progress
from hvbench_assets.defs.resources import (MllmResource, SettingsResource, VisionResource, WarehouseResource,
                                          configured_describer, profiled)

# (+ the face and person detectors when not the default ones) 5: YuNet faces by default (small and turned
# faces); 6: YuNet at 480 px; 7: YuNet at 320 px between full passes while every face is large; 8: face
# descriptors from dlib's network in numpy (dlib's own within 1e-6); 9: offline body boxes from YOLOX-nano persons (was: estimated from the face),
# a box holding the face only near its bottom no longer matches it, faceless_bodies per clip; 10: body-crop clips
# only in runs that also describe appearance (L4 cuts them itself otherwise)
HUMAN_TRACKS_VERSION = profiled("10", "HVBENCH_FACE_DETECTOR", "HVBENCH_PERSON_DETECTOR")
PERSON_COUNT_VERSION = profiled("1")
DEMOGRAPHICS_VERSION = profiled("4")  # 2: offline SSR-Net estimator, low_confidence rule, age class; 3: gender
# ensemble (SSR-Net, UTKFace, mini-Xception) by default, its agreement as gender_confidence; 4: the accuracy gate's
# measured figures also over the speaker composites (the ensemble's rows are unchanged, 0.93 >= 0.9)
# the verdict's rule and coefficients, and the describer's prompt and model (asked when one is configured)
_DESCRIBER = configured_describer()
HUMAN_VERDICTS_VERSION = realness_version(f"p{REAL_HUMAN.fingerprint}-m{describer_fingerprint(_DESCRIBER)}"
                                          if _DESCRIBER else None)
PAPER_FACE_RATIO = 0.65  # the paper keeps clips whose sampled frames show a face at least this often


def _profile(settings: SettingsResource) -> str:
    return "full" if settings.is_full else "offline"


def _tracks_rows(warehouse: WarehouseResource, video_id: str) -> list[dict]:
    return required_rows(warehouse.get(), HUMAN_TRACKS, video_id, order_by="track_id")


def _preview(rows: list[dict], cols: list[str]) -> dg.MetadataValue:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows[:20]:
        lines.append("| " + " | ".join("" if r.get(c) is None else str(rounded(r.get(c))) for c in cols) + " |")
    return dg.MetadataValue.md("\n".join(lines))


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=["video_probe"],
    group_name="labels",
    kinds={"python", "duckdb", "video"},
    code_version=HUMAN_TRACKS_VERSION,
    pool="cpu",  # CPU-heavy: across runs at most one per core (runtime/executor.py)
    # a batch's clips shared with a helper process, unless this process detected faces before (runtime/batch.py)
    op_tags={SPLIT_TAG: "clips", SPLIT_FRESH_TAG: YuNetFaceDetector.RUNTIME},
    description="L1: face tracks with body boxes per person, frame-level boxes, face-crop clips (and body-crop "
                "clips when the run describes appearance)",
    metadata=table_definition(HUMAN_TRACKS, HUMAN_TRACK_BOXES),
)
@per_clip(cost=lambda keys, warehouse, **_: clip_seconds(warehouse.get(), keys))  # a split's halves by seconds
def human_tracks(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                 vision: VisionResource) -> dg.MaterializeResult:
    vid = context.partition_key
    wh = warehouse.get()
    media = settings.media_dir(vid) / "human_tracks"
    try:
        clip = load_clip(wh, vid)
        backend = vision.backend(_profile(settings))
        # crops go beside the previous ones: the stored rows keep naming existing files until the new rows commit
        out_dir = run_folder(media, context.run_id)
        params = replace(vision.tracking_params(), body_clips=run_plans(context, "appearance"))
        result = track_video(clip.path, out_dir, backend, params)
    except (ClipNotFound, BackendUnavailable, MediaError) as exc:
        raise dg.Failure(description=f"human_tracks for {vid}: {exc}") from exc
    tracks = [{**stored_columns(t, ("face_clip_path", "body_clip_path")), "faceless_bodies": result.faceless_bodies}
              for t in result.tracks] or [{
        "track_id": None, "status": "no_faces", "clip_frames": result.frame_count, "face_presence": 0.0,
        "faceless_bodies": result.faceless_bodies,
        "reason": f"the face detector ({backend.face.model}) found no face track of at least "
                  f"{vision.min_track_s}s in {result.frame_count} frames"
                  + (f"; the person detector sees {result.faceless_bodies} person(s) without a face"
                     if result.faceless_bodies else ""),
    }]
    prov = {"backend": backend.name, "model": backend.model, "code_version": HUMAN_TRACKS_VERSION}
    wh.replace_tables([(HUMAN_TRACKS, {"video_id": vid}, tracks, prov),  # tracks and boxes change together
                       (HUMAN_TRACK_BOXES, {"video_id": vid}, result.boxes, prov)])
    # the rows name this run's files now (committed, also in a batch); older crops go (a run killed before the
    # commit left them in place)
    wh.commit_held()
    remove_replaced(media, out_dir, lambda run_id: run_in_progress(context.instance, run_id))
    stored = load_tracks(wh, vid)
    numbers = number_tracks(stored)
    return dg.MaterializeResult(metadata=materialization({
        **row_counts(wh, HUMAN_TRACKS, len(tracks)),
        "tracks": len(result.tracks),
        "box_rows": len(result.boxes),
        "face_presence": result.face_presence,
        "faceless_bodies": result.faceless_bodies,
        "body_sources": dg.MetadataValue.json(dict(Counter(b["body_source"] for b in result.boxes))),
        "frames": result.frame_count,
        "video_decodes": result.video_decodes,
        "seconds": dg.MetadataValue.json(result.timings),
        "model": backend.model,
        **paths(clip=clip.path, crop_dir=out_dir),
        **_key_frame(context, clip.path, stored, out_dir, result.key_frame),
        # "number": the person number the key frame, the speaker plot and the task pages use for this track
        "preview": _preview([{**t, "number": numbers.get(t["track_id"], "")} for t in tracks],
                            ["track_id", "number", "status", "first_s", "last_s", "coverage", "face_size_median",
                                     "n_detections", "face_clip_path"]),
    }))


def _key_frame(context: dg.AssetExecutionContext, clip: Path, tracks, out_dir: Path, kept) -> dict:
    """The stored boxes and person numbers on the frame showing the most tracks (nothing for a clip without faces)."""
    try:
        drawn = render_key_frame(clip, tracks, out_dir / "key_frame.jpg", kept=kept,
                                 thumbnail_bytes=inline_bytes("key_frame_thumbnail"))
    except (MediaError, OSError) as exc:  # a picture for the UI only: the labels are stored already
        context.log.warning(f"key frame of {clip} not drawn: {exc}")
        return {}
    if drawn is None:
        return {}
    return {**image(drawn.path, "key_frame", drawn.thumbnail), "key_frame_index": drawn.frame,
            "people_on_key_frame": dg.MetadataValue.json(frame_people(tracks, drawn.frame))}


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=[human_tracks],
    group_name="labels",
    kinds={"python", "duckdb"},
    code_version=PERSON_COUNT_VERSION,
    description="L2: approximate number of distinct people, from L1 tracks merged by face descriptor",
    metadata=table_definition(PERSON_COUNT),
)
@per_clip
def person_count(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                 vision: VisionResource) -> dg.MaterializeResult:
    vid = context.partition_key
    rows = _tracks_rows(warehouse, vid)
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        row = {"status": "no_faces", "reason": rows[0]["reason"], "person_count": 0, "n_tracks": 0,
               "max_simultaneous": 0, "n_merges": 0, "persons": [], "merges": [],
               "method": "no L1 tracks: no visible face"}
    else:
        res = count_people([TrackSpan(r["track_id"], r["first_frame"], r["last_frame"], r["face_embedding"]) for r in ok],
                           threshold=vision.same_person_distance)
        row = {"status": "ok", "reason": None, "person_count": res.count, "n_tracks": res.n_tracks,
               "max_simultaneous": res.max_simultaneous, "n_merges": len(res.merges), "persons": res.persons,
               "merges": res.merges, "threshold": res.threshold, "method": res.method}
    model = rows[0].get("model") or "unknown"
    warehouse.get().replace(PERSON_COUNT, {"video_id": vid}, [row], provenance={
        "backend": rows[0].get("backend") or "derived", "model": f"L1 tracks ({model}) + descriptor merge",
        "code_version": PERSON_COUNT_VERSION})
    return dg.MaterializeResult(metadata=materialization({
        **row_counts(warehouse.get(), PERSON_COUNT, 1),
        "person_count": row["person_count"], "tracks": row["n_tracks"], "merges": row["n_merges"],
        "method": row["method"], "persons": dg.MetadataValue.json(row["persons"]),
    }))


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=[human_tracks],
    group_name="labels",
    kinds={"python", "duckdb"},
    code_version=DEMOGRAPHICS_VERSION,
    pool="cpu",
    description="L3: per-track age (median), child/adult, gender and race (mode, vote share) from face crops; offline "
                "three gender models must agree (mini-Xception, SSR-Net, UTKFace CNN; SSR-Net's age, no race), else "
                "low_confidence",
    metadata=table_definition(DEMOGRAPHICS),
)
@per_clip
def demographics(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                 vision: VisionResource) -> dg.MaterializeResult:
    vid = context.partition_key
    rows = _tracks_rows(warehouse, vid)
    profile = _profile(settings)
    try:
        estimator = vision.demographics_estimator(profile)
    except (BackendUnavailable, WeightsUnavailable, ValueError) as exc:  # ValueError: an unknown model name
        raise dg.Failure(description=f"demographics for {vid}: {exc}") from exc
    if not any(r["status"] == "ok" for r in rows):
        out = [{"track_id": None, "status": "no_faces", "reason": "no L1 face tracks in this clip"}]
    else:
        try:
            out = demographics_rows(load_tracks(warehouse.get(), vid), estimator, samples=vision.demographics_samples,
                                    rule=vision.demographics_rule(profile))
        except MediaError as exc:
            raise dg.Failure(description=f"demographics for {vid}: {exc}") from exc
    model = estimator.model if estimator is not None else "none (demographics_model=none)"
    warehouse.get().replace(DEMOGRAPHICS, {"video_id": vid}, out,
                            provenance={"backend": profile, "model": model, "code_version": DEMOGRAPHICS_VERSION})
    statuses = sorted({r["status"] for r in out})
    return dg.MaterializeResult(metadata=materialization({
        **row_counts(warehouse.get(), DEMOGRAPHICS, len(out)),
        "rows": len(out), "status": ", ".join(statuses), "model": model,
        "preview": _preview(out, ["track_id", "status", "age", "age_class", "gender", "gender_share", "male_score",
                                  "race", "reason"]),
    }))


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=[human_tracks],
    group_name="labels",
    kinds={"python", "duckdb"},
    code_version=HUMAN_VERDICTS_VERSION,
    pool="cpu",
    description="L1: per-track verdict 'real human' (drawn, animated, statue, printed or on-screen faces are not "
                "persons): face statistics, plus the describer's look when one is configured",
    metadata=table_definition(HUMAN_VERDICTS),
)
@per_clip
def human_verdicts(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                   mllm: MllmResource) -> dg.MaterializeResult:
    vid = context.partition_key
    wh = warehouse.get()
    rows = _tracks_rows(warehouse, vid)
    ask, describer, model = None, None, "face statistics (core/vision/real_human_model.json)"
    try:
        spec = mllm.describer()
    except ModelNotConfigured:
        spec = None
    if spec is not None:
        ask = real_human_asker(mllm.client(wh), spec, vid)
        describer = f"p{REAL_HUMAN.fingerprint}-m{describer_fingerprint(spec)}"
        model += f" + {spec.model_id}"
    if not any(r["status"] == "ok" for r in rows):
        out = [{"track_id": None, "status": "no_faces", "reason": "no L1 face tracks in this clip"}]
    else:
        try:
            out = verdict_rows(load_tracks(wh, vid), RealHumanParams(), ask, describer)
        except ModelUnreachable as exc:
            raise dg.Failure(description=f"human_verdicts of {vid}: {exc}") from exc  # a rerun pays only new calls
    wh.replace(HUMAN_VERDICTS, {"video_id": vid}, out,
               provenance={"backend": "offline" if spec is None else spec.backend, "model": model,
                           "code_version": HUMAN_VERDICTS_VERSION})
    judged = [r for r in out if r["status"] == "ok"]
    return dg.MaterializeResult(metadata=materialization({
        **row_counts(wh, HUMAN_VERDICTS, len(out)),
        "tracks": len(judged), "not_human": sum(not r["is_human"] for r in judged),
        "failed": sum(r["status"] == "failed" for r in out), "model": model,
        "preview": _preview(out, ["track_id", "status", "is_human", "score", "stats_score", "model_answer", "reason"]),
    }))


@dg.asset_check(asset=human_tracks, partitions_def=videos_partitions,
                description="Share of frames showing a tracked face is at least the paper's 0.65 face-ratio filter")
@per_clip_check
def face_presence_ratio(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = warehouse.get().rows(HUMAN_TRACKS, video_id=context.partition_key)
    ratio = float(rows[0]["face_presence"] or 0.0) if rows else 0.0
    return dg.AssetCheckResult(passed=bool(rows) and ratio >= PAPER_FACE_RATIO, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"face_presence": round(ratio, 3), "paper_threshold": PAPER_FACE_RATIO,
                                         "tracks": sum(r["status"] == "ok" for r in rows)})


@dg.asset_check(asset=human_tracks, partitions_def=videos_partitions,
                description="Every track has one box row per frame from its first to last frame, its face-crop clip "
                            "exists, and so does the body-crop clip its row names")
@per_clip_check
def track_boxes_complete(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    vid = context.partition_key
    problems = []
    for tr in load_tracks(warehouse.get(), vid):
        if len(tr.boxes) != tr.n_frames:
            problems.append(f"track {tr.track_id}: {len(tr.boxes)} box rows for {tr.n_frames} frames")
        if tr.face_clip_path is None or not Path(tr.face_clip_path).is_file():
            problems.append(f"track {tr.track_id}: face-crop clip missing ({tr.face_clip_path})")
        if tr.body_clip_path is not None and not Path(tr.body_clip_path).is_file():  # none: the run had no L4
            problems.append(f"track {tr.track_id}: body-crop clip missing ({tr.body_clip_path})")
    return dg.AssetCheckResult(passed=not problems, metadata={"problems": dg.MetadataValue.json(problems)})
