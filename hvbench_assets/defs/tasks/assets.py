"""The 16 task assets (group `tasks`), one per family of core/tasks/catalog.py, built by one factory.

Each asset depends on exactly the labels its family reads (Table 9 plus what our rules need), so the
lineage graph is Table 9. Per clip it stores one `task_candidates` verdict and at most one question (the six
descriptive families and AR also their `synthesis_steps`); re-materializing replaces them in one transaction.
A question row is a function of its own inputs (the answer slot is drawn from the question id), so a rerun on
unchanged inputs stores identical rows; answer letters are balanced when the benchmark is assembled.
"""


import dagster as dg

from hvbench_assets.core.benchmark.answer_basis import answer_tracks
from hvbench_assets.core.media import MediaError
from hvbench_assets.core.mllm import ModelNotConfigured
from hvbench_assets.core.mllm.descriptions import describer_fingerprint
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.render.inline import inline_bytes
from hvbench_assets.core.render.keyframe import frame_people, render_key_frame
from hvbench_assets.core.vision.tables import number_tracks
from hvbench_assets.core.render.questions import render_question_video
from hvbench_assets.core.synthesis.calls import SynthesisModels, too_few_answerers
from hvbench_assets.core.synthesis.rerank import agreement_counts
from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS, step_rows
from hvbench_assets.core.tasks import annotations, humans
from hvbench_assets.core.tasks.calls import ModelUnreachable, asker
from hvbench_assets.core.tasks.labels import PAPER_LABEL, LabelsMissing, load_labels
from hvbench_assets.core.tasks.materialize import (earlier_actions, key_frame_path, question_dir, stored_video_path,
                                                   task_counts)
from hvbench_assets.core.tasks.pipeline import (
    ANSWER_SLOT_RULE,
    blocked_row,
    preview_markdown,
    question_at_a_glance,
    run_family,
)
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.tasks.family import TaskFamily
from hvbench_assets.core.tasks.rules import named_number
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, per_clip
from hvbench_assets.runtime.executor import FORK_TAG
from hvbench_assets.defs.metadata import image, table_definition
from hvbench_assets.defs.metadata import paths as file_paths
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.tasks.checks import question_check, question_check_spec
from hvbench_assets.defs.resources import (MllmResource, SettingsResource, WarehouseResource, configured_describer,
                                          configured_ensemble)
from hvbench_assets.defs.run_tags import clip_source_tags, tag_run


_DESCRIBER = configured_describer()
_ENSEMBLE = configured_ensemble()


def code_version(family: TaskFamily) -> str:
    """Rule version, thresholds, prompts, and (for model-built families) the model that writes them; the
    descriptive families add their answering models and weights."""
    version = f"{family.fingerprint()}-{ANSWER_SLOT_RULE}-h{humans.RULE_VERSION}"
    if family.descriptive:
        version += f"-e{_ENSEMBLE}"
    return f"{version}-m{describer_fingerprint(_DESCRIBER)}" if family.needs_model else version


def _description(family: TaskFamily) -> str:
    how = ("distractor-included synthesis: caption, question, ensemble answers, weighted ranking, perturbation"
           if family.descriptive
           else "truth from a human annotation" if family.annotation
           else "built with a model" if family.needs_model else "built from labels")
    return f"{family.abbrev} ({family.name}): per-clip selection verdict and question ({how})"


def task_asset(family: TaskFamily) -> dg.AssetsDefinition:
    version = code_version(family)

    @dg.asset(
        name=family.asset,
        partitions_def=videos_partitions,
        backfill_policy=CLIP_BACKFILL_POLICY,
        deps=["video_probe", *family.reads, *(f.asset for f in family.after)],
        group_name="tasks",
        kinds={"python", "duckdb", "video"},
        code_version=version,
        pool="mllm" if family.needs_model else None,
        # rule-based families that encode a question video: beside the run's other steps
        op_tags={FORK_TAG: "fork"} if not family.needs_model and family.marking != "none" else None,
        description=_description(family),
        check_specs=[question_check_spec(family)],
        metadata={**table_definition(QUESTIONS, TASK_CANDIDATES, *((SYNTHESIS_STEPS,) if family.records_steps else ())),
                  "task": family.name, "abbrev": family.abbrev, "category": family.category,
                  "labels_table9": ", ".join(f"{PAPER_LABEL[x]} {x}" for x in family.labels),
                  "labels_ours": ", ".join(f"{PAPER_LABEL[x]} {x}" for x in family.ours) or "-",
                  "marking": family.marking,
                  "tables": "task_candidates, questions" + (", synthesis_steps" if family.records_steps else "")},
    )
    @per_clip
    def _asset(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
               mllm: MllmResource) -> dg.MaterializeResult:
        return materialize_task(context, family, version, settings, warehouse, mllm)

    return _asset


def materialize_task(context, family: TaskFamily, version: str, settings: SettingsResource,
                     warehouse: WarehouseResource, mllm: MllmResource) -> dg.MaterializeResult:
    vid = context.partition_key
    wh = warehouse.get()
    prov = {"backend": "rules", "model": None, "code_version": version}
    spec = None
    if family.needs_model:
        try:
            spec = mllm.describer()
        except ModelNotConfigured as exc:
            ensemble = "; the synthesis also needs answering models (HVBENCH_MLLM_MODELS)" if family.descriptive else ""
            return _blocked(context, settings, wh, family, prov, f"needs a model: {exc}{ensemble}")
        prov["model"] = spec.provenance_model
    answerers = []
    if family.descriptive:
        reg = mllm.registry()
        try:
            answerers = reg.active()
        except ModelNotConfigured as exc:
            return _blocked(context, settings, wh, family, prov, f"an answering model is not usable: {exc}")
        if reason := too_few_answerers(answerers, reg.min_answerers, reg.source):
            return _blocked(context, settings, wh, family, prov, reason)
    try:
        labels = load_labels(wh, vid, family.reads)
    except LabelsMissing as exc:
        raise dg.Failure(description=f"{family.asset} of {vid}: {exc}", allow_retries=False) from exc
    out_dir = question_dir(settings.data_dir, vid)
    clip = labels.clip

    def red_box_video(track_ids: tuple[int, ...]):
        return render_question_video(clip.path, clip.sha256, labels.tracks,
                                     {"kind": "red_box", "track_ids": sorted(track_ids)}, out_dir)

    def marked_video(marking):
        return render_question_video(clip.path, clip.sha256, labels.tracks, marking, out_dir)

    bta_actions = earlier_actions(wh, vid, family.after)  # AST: BTA's action list of this clip
    client = mllm.client(wh) if spec else None
    synthesis = SynthesisModels(client, spec, answerers, vid, family.name) if family.descriptive else None
    try:
        outcome = run_family(
            family, labels, ask=asker(client, spec, vid, family.name) if spec else None, red_box_video=red_box_video,
            annotation=(lambda tids: annotations.latest(wh, vid, family.annotation.kind, tuple(tids))),
            marked_video=marked_video, synthesis=synthesis, bta_actions=bta_actions,
        )
    except ModelUnreachable as exc:
        raise dg.Failure(description=str(exc)) from exc  # transient: a rerun pays only for uncached calls
    except MediaError as exc:
        raise dg.Failure(description=f"{family.asset} of {vid}: {exc}", allow_retries=False) from exc
    candidate = outcome.candidate_row()
    holder: dict = {}

    def build(con):
        question, marking = outcome.question_row()
        if question is not None and marking is not None:
            question["video_path"] = stored_video_path(out_dir, labels, marking)
        holder.update(question=question, marking=marking)
        return _items(vid, family, candidate, question, prov, outcome.steps, outcome.qid)

    wh.read_then_replace((TASK_CANDIDATES, QUESTIONS) + ((SYNTHESIS_STEPS,) if family.records_steps else ()), build)
    question, marking = holder["question"], holder["marking"]
    if marking is not None:
        try:
            render_question_video(clip.path, clip.sha256, labels.tracks, marking, out_dir)
        except (MediaError, OSError) as exc:
            failed = {**candidate, "status": "failed", "reason": f"question video could not be rendered: {exc}"}
            _write(wh, vid, family, failed, None, prov)
            raise dg.Failure(description=f"{family.asset} of {vid}: {failed['reason']}") from exc
    calls = outcome.result.call_ids if outcome.result is not None else []
    with wh.batch():  # the metadata's quick reads in one opening of the file (16 tasks x every clip)
        source, overview = clip_source_tags(wh, settings.inbox, vid, context.run_id), task_overview(wh, family)
    tags = tag_run(context, source)
    # what a person came for first (the UI keeps this order): the question inline, its picture, why; bookkeeping after
    return dg.MaterializeResult(tags=tags, check_results=[question_check(family, question, candidate)], metadata={
        "question": dg.MetadataValue.md(question_at_a_glance(with_track_ids(question, marking) if question else None,
                                                             candidate["status"], candidate["reason"] or "")),
        **(question_pointers(context, question, marking, clip.path, labels.tracks, out_dir, settings.review_url)
           if question else {}),
        "status": candidate["status"], "rule": candidate["rule"], "reason": candidate["reason"] or "",
        "measured": dg.MetadataValue.json(candidate["measured"]), "questions": int(bool(question and question["answer"])),
        "dagster/row_count": 1 + int(question is not None), "model_calls": len(calls),
        **(synthesis_overview(wh, family, synthesis) if synthesis else {}),
        "preview": dg.MetadataValue.md(preview_markdown([with_track_ids(question, marking)]) if question else
                                       f"{candidate['status']}: {candidate['reason']}"),
        **(file_paths(question_video=resolve(question["video_path"])) if question and question["video_path"] else {}),
        **overview,
    })


def with_track_ids(question: dict, marking: dict | None) -> dict:
    """The question for the UI with each person option naming its track: "Person 2 (track 3)"."""
    numbered = (marking or {}).get("numbers") or {}
    if not numbered:
        return question
    tracks_of: dict[int, list[int]] = {}
    for tid, number in numbered.items():
        tracks_of.setdefault(int(number), []).append(int(tid))
    options = []
    for o in question["options"]:
        number = named_number(o["text"])
        if o["text"] == f"Person {number}" and number in tracks_of:
            o = {**o, "text": f"{o['text']} (track {', '.join(map(str, sorted(tracks_of[number])))})"}
        options.append(o)
    return {**question, "options": options}


def people_table(tracks, question: dict, marking: dict | None) -> str:
    """Who is who in this question: every track of the clip with its person number (the one rule,
    core/vision `number_tracks`, as on the human_tracks key frame and the speaker_scores plot), how the question
    marks it, and whether it is the answer."""
    clip = number_tracks(list(tracks))
    marking = marking or {}
    drawn = {int(t): int(n) for t, n in (marking.get("numbers") or {}).items()}
    red = {int(t) for t in marking.get("track_ids", ())}
    answer = set(answer_tracks(question)) if drawn or red else set()
    lines = ["| person | track | in this question | answer |", "|---|---|---|---|"]
    for tid in sorted(clip, key=clip.get):
        if tid in drawn:
            how = f"box {drawn[tid]}" + ("" if drawn[tid] == clip[tid] else f" (L2: the same person as Person {drawn[tid]})")
        else:
            how = "red box" if tid in red else "not marked"
        lines.append(f"| {clip[tid]} | {tid} | {how} | {'yes' if tid in answer else ''} |")
    return "\n".join(lines)


def question_pointers(context, question: dict, marking: dict | None, clip_path, tracks, out_dir, review_url: str) -> dict:
    """What a reader acts on: the question video's key frame with its boxes, the explain command, the review link."""
    qid = question["question_id"]
    out: dict = {}
    kind = (marking or {}).get("kind", "none")
    numbers = {int(t): int(n) for t, n in (marking or {}).get("numbers", {}).items()}
    highlight = {int(t) for t in (marking or {}).get("track_ids", ())}
    shown = [t for t in tracks if t.track_id in numbers or t.track_id in highlight] or list(tracks)
    try:
        # the clip's person numbers (human_tracks); a numbered question's are the same, as drawn on its video
        names = {**number_tracks(list(tracks)), **(numbers if kind == "numbers" else {})}
        drawn = render_key_frame(clip_path, shown, key_frame_path(out_dir, qid), numbers=names,
                                 highlight=highlight, thumbnail_bytes=inline_bytes("question_key_frame_thumbnail"))
    except (MediaError, OSError) as exc:  # a picture for the UI only
        context.log.warning(f"key frame of question {qid} not drawn: {exc}")
        drawn = None
    if drawn is not None:  # the thumbnail on the first screen, the full picture and its file after
        out.update(image(drawn.path, "question_key_frame", drawn.thumbnail))
        out["people_on_key_frame"] = dg.MetadataValue.json(frame_people(shown, drawn.frame, names))
    out.update({"explain": dg.MetadataValue.md(f"`hvbench explain {qid}`"),
                "review_app": dg.MetadataValue.url(f"{review_url.rstrip('/')}/questions/{qid}")})
    if tracks:  # who is who: the same number and track id as on human_tracks and speaker_scores
        out["people"] = dg.MetadataValue.md(people_table(tracks, question, marking))
    return out


def task_overview(wh, family: TaskFamily) -> dict:
    """Across every clip of this task (keys `task_wide_*`, the same on every partition): verdicts by status and
    rule, and how often each letter is the answer."""
    verdicts, letters = task_counts(wh, family.name)
    return {"task_wide_verdicts": dg.MetadataValue.json(verdicts),
            "task_wide_answer_letters": dg.MetadataValue.json(letters)}


def synthesis_overview(wh, family: TaskFamily, synthesis: SynthesisModels) -> dict:
    """This run's calls (made vs cached, tokens) and, across the task, how often the winning answer was
    each answering model's own (agreement with the ensemble)."""
    won, n = agreement_counts(wh, family.name)
    return {"synthesis_calls": dg.MetadataValue.json(synthesis.stats.as_dict()),
            "answerers": dg.MetadataValue.json(synthesis.weights),
            "ensemble_agreement": dg.MetadataValue.json(
                {m: f"{won.get(m, 0)}/{n}" for m in synthesis.weights} if n else {})}


def _blocked(context, settings: SettingsResource, wh, family, prov, reason) -> dg.MaterializeResult:
    """No question here: the model the family needs is missing. Stored, tagged with its file like any task run."""
    vid, row = context.partition_key, blocked_row(family, reason)
    _write(wh, vid, family, row, None, prov)
    return dg.MaterializeResult(
        tags=tag_run(context, clip_source_tags(wh, settings.inbox, vid, context.run_id)), check_results=[question_check(family, None, row)],
        metadata={"question": dg.MetadataValue.md(question_at_a_glance(None, "blocked", row["reason"])),
                  "status": "blocked", "reason": row["reason"], "questions": 0})


def _items(vid, family, candidate, question, prov, steps=(), qid=None):
    key = {"video_id": vid, "task": family.name}
    items = [(TASK_CANDIDATES, key, [candidate], prov), (QUESTIONS, key, [question] if question else [], prov)]
    if family.records_steps:
        items.append((SYNTHESIS_STEPS, key, step_rows(list(steps), vid, family.name, family.abbrev, qid,
                                                      prov["code_version"]), None))
    return items


def _write(wh, vid, family, candidate, question, prov) -> None:
    wh.replace_tables(_items(vid, family, candidate, question, prov))


TASK_ASSETS = [task_asset(f) for f in TASKS]
