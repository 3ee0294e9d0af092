"""L7: `speaker_frame_scores`, per-frame active-speaker scores on L1's face-crop clips (never the full video; the costly
part, which needs no other label than L1 and L6, so it starts right after L1), and `speaker_scores`, the speaking
verdicts from them with L2, L3 and the voice (run rule, veto, persons)."""

import dagster as dg

from hvbench_assets.core.audio.labels import speech_gate, status_row
from hvbench_assets.core.audio.tables import AUDIO_TAGS, VOICE_DEMOGRAPHICS
from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.speakers import rules
from hvbench_assets.core.speakers.persons import person_groups, person_of, speaking_persons
from hvbench_assets.core.speakers.plot import line_label, render_score_plot
from hvbench_assets.core.speakers.scoring import TrackFrames, clip_scores, too_small, verdict_rows
from hvbench_assets.core.speakers.tables import SPEAKER_FRAME_SCORES, SPEAKER_SCORES
from hvbench_assets.core.vision.tables import (DEMOGRAPHICS, HUMAN_TRACKS, PERSON_COUNT, load_tracks, number_tracks,
                                              track_frames)
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, SPLIT_TAG, per_clip
from hvbench_assets.runtime.executor import FORK_TAG
from hvbench_assets.defs.labels.audio import load_clip_audio, run_backend
from hvbench_assets.defs.labels.inputs import required_rows
from hvbench_assets.defs.metadata import image, materialization, row_counts, table_definition
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import AudioModelsResource, SettingsResource, WarehouseResource, profiled

SPEAKER_FRAME_SCORES_BASE = "3"  # 3: the pause check (the mouth rests in the voice's pauses); 2: `verified` (Light-ASD under the time-shift test) by default, faces too small to judge marked; 1: the per-frame scores of L7 (speaker_scores 10) as their own asset
SPEAKER_FRAME_SCORES_VERSION = profiled(SPEAKER_FRAME_SCORES_BASE)
SPEAKER_SCORES_BASE = "12"  # 12: on verified scores, too_small rows; 11: rules on speaker_frame_scores; 10: Light-ASD (shipped weights, ONNX) gated by lip-sync by default (speaker_method); 9: each signal above its own chance level; 8: chance floor per track; 7: voice envelopes above 1 kHz, min sync 0.30; 6: 0.9 of the best co-visible face; 5: lip opening joined the motion; 4: motion only
SPEAKER_SCORES_VERSION = profiled(SPEAKER_SCORES_BASE)


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=["human_tracks", "audio_tags"],
    group_name="labels",
    kinds={"audio", "video", "duckdb"},
    code_version=SPEAKER_FRAME_SCORES_VERSION,
    metadata=table_definition(SPEAKER_FRAME_SCORES),
    pool="cpu",  # CPU-heavy: across runs at most one per core (runtime/executor.py)
    # reads no L2/L3/voice label, so it starts right after L1 beside them and the task steps; a batch's clips
    # shared with a helper process only where it runs in the run's own process (no fork: DuckLake, one core): a
    # forked step keeps them (runtime/batch.py)
    op_tags={FORK_TAG: "fork", SPLIT_TAG: "clips"},
    description="L7 evidence: per-track active-speaker score per frame on L1's face-crop clips (default: Light-ASD, kept "
                "where its score falls when the sound is shifted, a voice is heard and no other face's lips follow the "
                "voice better; faces too small to judge marked), before the run rule and the veto",
)
@per_clip(cost=lambda keys, warehouse, **_: track_frames(warehouse.get(), keys))  # a split's halves: track frames
def speaker_frame_scores(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                         audio_models: AudioModelsResource) -> dg.MaterializeResult:
    video_id = context.partition_key
    wh = warehouse.get()
    scorer = audio_models.backend("asd", settings.is_full)
    # loads the network (or falls back to lip-sync) first, so provenance names what really runs
    model = run_backend(lambda: scorer.model)
    prov = {"backend": scorer.backend, "model": model, "method": scorer.method, "method_note": scorer.method_note,
            "code_version": f"{SPEAKER_FRAME_SCORES_BASE}-{scorer.backend}"}
    meta = {"backend": scorer.backend, "model": model, "method": scorer.method}
    required_rows(wh, HUMAN_TRACKS, video_id)
    gate = speech_gate((wh.rows(AUDIO_TAGS, video_id=video_id) or [None])[0])
    tracks = load_tracks(wh, video_id)
    if gate is None and not tracks:
        gate = status_row("no_faces", "L1 found no face tracks")
    if gate is not None:
        # the clip-level reason applies to every track: still one row per track (or one for the clip)
        rows = [{**gate, "track_id": t.track_id} for t in tracks] or [dict(gate)]
        wh.replace(SPEAKER_FRAME_SCORES, {"video_id": video_id}, rows, provenance=prov)
        return dg.MaterializeResult(metadata={**row_counts(wh, SPEAKER_FRAME_SCORES, len(rows)),
                                              "status": gate["status"], "rows": len(rows), **meta})
    _, audio = load_clip_audio(settings, warehouse, video_id)
    small = {tr.track_id: why for tr in tracks if (why := too_small(tr.face_size_median))}
    readable = [tr for tr in tracks if tr.face_clip_path is not None and tr.face_clip_path.exists()
                and tr.track_id not in small]
    missing = [tr for tr in tracks if tr not in readable and tr.track_id not in small]
    rows = run_backend(
        clip_scores, scorer,
        [TrackFrames(tr.track_id, tr.first_frame, tr.n_frames, lambda p=tr.face_clip_path: (f.image for f in iter_frames(p)))
         for tr in readable],
        audio, tracks[0].fps,
    )
    rows += [{"track_id": tr.track_id, "fps": tr.fps, "first_frame": tr.first_frame,
              **status_row("failed", f"face-crop clip missing: {to_stored(tr.face_clip_path)}")}
             for tr in missing]
    rows += [{"track_id": tr.track_id, "fps": tr.fps, "first_frame": tr.first_frame, "method": scorer.method,
              **status_row("too_small", small[tr.track_id])} for tr in tracks if tr.track_id in small]
    rows.sort(key=lambda r: r["track_id"])
    wh.replace(SPEAKER_FRAME_SCORES, {"video_id": video_id}, rows, provenance=prov)
    scored = [r for r in rows if r.get("scores")]
    return dg.MaterializeResult(metadata={
        **row_counts(wh, SPEAKER_FRAME_SCORES, len(rows)), "status": "ok", "rows": len(rows), "scored_tracks": len(scored),
        "frames": sum(len(r["scores"]) for r in scored), **meta,
        **({"method_note": scorer.method_note} if scorer.method_note else {}),
        "preview": dg.MetadataValue.md("| track | status | frames | best score | positive share |\n|---|---|---|---|---|\n"
                                      + "\n".join(_frames_line(r) for r in rows)),
    })


def _frames_line(r: dict) -> str:
    """One track's frame scores in the preview: how many, the best one, the share above 0."""
    s = r.get("scores") or []
    tail = f"{max(s):+.2f} | {sum(x > 0 for x in s) / len(s):.2f} |" if s else " | |"
    return f"| {r['track_id']} | {r['status']} | {len(s)} | {tail}"


@dg.asset(
    partitions_def=videos_partitions,
    backfill_policy=CLIP_BACKFILL_POLICY,
    deps=[speaker_frame_scores, "human_tracks", "person_count", "voice_demographics", "demographics"],
    group_name="labels",
    kinds={"python", "duckdb"},
    code_version=SPEAKER_SCORES_VERSION,
    metadata=table_definition(SPEAKER_SCORES),
    description="L7: per-track speaking flag from speaker_frame_scores (longest positive run, then the voice/face veto), "
                "per L2 person, with the score plot",
)
@per_clip
def speaker_scores(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                   audio_models: AudioModelsResource) -> dg.MaterializeResult:
    video_id = context.partition_key
    wh = warehouse.get()
    evidence = required_rows(wh, SPEAKER_FRAME_SCORES, video_id, order_by="track_id")
    first = evidence[0]
    prov = {"backend": first["backend"], "model": first["model"], "method": first["method"],
            "method_note": first["method_note"], "code_version": f"{SPEAKER_SCORES_BASE}-{first['backend']}"}
    meta = {"backend": first["backend"], "model": first["model"], "method": first["method"]}
    # the frame scores' own columns; provenance and the clip's id are speaker_scores' to write
    score_rows = [{c: r[c] for c, _ in SPEAKER_FRAME_SCORES.columns if c != "video_id"} for r in evidence]
    if all(r["status"] not in ("ok", "failed") for r in score_rows):  # a clip-level status (no_speech, no_faces, ...)
        rows = verdict_rows(score_rows)
        wh.replace(SPEAKER_SCORES, {"video_id": video_id}, rows, provenance=prov)
        return dg.MaterializeResult(metadata=materialization({**row_counts(wh, SPEAKER_SCORES, len(rows)),
                                              "status": first["status"], "rows": len(rows), "speakers": 0, **meta}))
    voice = rules.voice_class((wh.rows(VOICE_DEMOGRAPHICS, video_id=video_id) or [None])[0])
    faces = {r["track_id"]: rules.face_class(r) for r in wh.rows(DEMOGRAPHICS, video_id=video_id)}
    rows = verdict_rows(score_rows, audio_models.speaking_min_run, voice, faces, audio_models.veto_min_confidence)
    persons_row = (wh.rows(PERSON_COUNT, video_id=video_id) or [None])[0]
    groups = person_groups([r["track_id"] for r in rows], persons_row)
    talkers = speaking_persons(rows, persons_row)
    for r in rows:
        k = person_of(r["track_id"], groups)
        r.update(person=k, person_tracks=groups[k], person_speaking=groups[k] in talkers)
    wh.replace(SPEAKER_SCORES, {"video_id": video_id}, rows, provenance=prov)
    numbers = number_tracks(load_tracks(wh, video_id))  # the key frame's person numbers
    table = "\n".join(_preview_line(r, numbers) for r in rows)
    plot = render_score_plot(rows, settings.media_dir(video_id) / "speaker_scores.png", numbers=numbers)
    return dg.MaterializeResult(metadata=materialization({**row_counts(wh, SPEAKER_SCORES, len(rows)),
        "status": "ok", "rows": len(rows), "speakers": len(talkers), "speaking_persons": dg.MetadataValue.json(talkers),
        "speaking_tracks": dg.MetadataValue.json([r["track_id"] for r in rows if r.get("speaking")]), **meta,
        **({"method_note": first["method_note"]} if first.get("method_note") else {}),
        "preview": dg.MetadataValue.md("| track | number | L2 person index | status | frames | longest run | best score | speaking | veto |\n"
                                      "|---|---|---|---|---|---|---|---|---|\n" + table),
        **({**image(plot, "score_plot"), "score_plot_lines": dg.MetadataValue.json(
            [line_label(r, numbers) for r in rows if r.get("scores")])} if plot else {}),
    }))


def _preview_line(r: dict, numbers: dict[int, int]) -> str:
    """One track in the preview; best score = how far its best frame is above (> 0) or below its speaking bar."""
    best = f"{max(r['scores']):+.2f}" if r.get("scores") else ""
    return (f"| {r['track_id']} | {numbers.get(r['track_id'], '')} | {r['person']} | {r['status']} | {r.get('n_frames')} | {r.get('longest_run')} | {best} | "
            f"{r['speaking']} | {r.get('veto_reason') or ''} |")
