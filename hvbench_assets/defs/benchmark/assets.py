"""Benchmark assembly (group `benchmark`, cross-clip): `question_pool` -> `blind_leakage` -> `benchmark_export`,
and `benchmark_job` running the three in order. They are partitioned by benchmark name (the evaluation's
`eval_benchmarks` partitions), so `eval_responses` of one benchmark depends on that benchmark's export only. The rules live in core/benchmark (pool, leakage, export);
these assets read the warehouse, call them, write the tables and show counts per task."""


import hashlib
import json
import string
from pathlib import Path

import dagster as dg

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.evidence import EVIDENCE_VERSION, evidence_summary, item_evidence
from hvbench_assets.core.benchmark.export import EXPORT_CODE_VERSION, ExportError, check_replaceable, export_benchmark
from hvbench_assets.core.benchmark.formats import DERIVED, DERIVED_VERSIONS, FORMAT_NAMES, MC, format_of, write_derived
from hvbench_assets.core.benchmark.layout import EVIDENCE_FIELD
from hvbench_assets.core.benchmark.letters import LETTER_RULE_VERSION, assemble_letters, letter_counts
from hvbench_assets.core.benchmark.leakage import (
    BLIND_PROMPT_VERSION,
    LEAKAGE_CODE_VERSION,
    answer_blind,
    blind_jobs,
    guessable,
    leakage_verdicts,
)
from hvbench_assets.core.benchmark.pool import POOL_CODE_VERSION, pool_summary, select_pool
from hvbench_assets.core.benchmark.repair import (
    REPAIR_CODE_VERSION,
    repair_counts,
    repair_leaky,
    repair_step_items,
    synthesis_step_rows,
)
from hvbench_assets.core.benchmark.tables import (
    BLIND_ANSWERS,
    EXPORT_ITEMS,
    LEAKAGE_REPAIRS,
    LEAKAGE_VERDICTS,
    QUESTION_POOL,
    TEXT_BIAS,
)
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.media.paths import resolve, to_stored
from hvbench_assets.core.mllm import ModelNotConfigured
from hvbench_assets.core.scoring.textbias import (
    TEXTBIAS_CODE_VERSION,
    TextBias,
    item_rows,
    items_from_pool,
    manifest_section,
    text_bias,
)
from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions
from hvbench_assets.defs.metadata import paths as file_paths
from hvbench_assets.defs.metadata import table_definition
from hvbench_assets.defs.resources import BenchmarkResource, MllmResource, SettingsResource, WarehouseResource

ORDER = [t.abbrev for t in TASKS]

MAX_LEAKAGE_REMOVED_SHARE = 0.5  # above: the check warns (the filter keeps working; the pool is what to look at)


def _md(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) if rows else "nothing yet"


def pool_inputs(wh) -> list[dict]:
    """reviewed_questions (state, answer and options after corrections) joined with the question's text,
    video, target and rule parameters."""
    if not wh.has_table(REVIEWED_QUESTIONS.name):
        raise dg.Failure(description="no reviewed_questions table: materialize reviewed_questions (group curation) first",
                         allow_retries=False)
    questions = {q["question_id"]: q for q in wh.rows(QUESTIONS)}
    out = []
    for r in wh.rows(REVIEWED_QUESTIONS):
        q = questions.get(r["question_id"])
        if q is None:
            continue
        out.append({**r, "question": q["question"], "video_path": q["video_path"],
                    "target_track_ids": q["target_track_ids"], "rule_params": q["rule_params"],
                    "rule_version": q["rule_version"], "label_rows": q["label_rows"]})
    return out


@dg.asset(
    name="question_pool",
    partitions_def=eval_benchmarks_partitions,
    deps=["reviewed_questions"],
    group_name="benchmark",
    kinds={"python", "duckdb"},
    code_version=POOL_CODE_VERSION,
    description="Balanced pool of reviewed questions: per-task targets, HC strata, ER polarity, right-letter balance",
    metadata=table_definition(QUESTION_POOL),
)
def question_pool(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                  benchmark: BenchmarkResource) -> dg.MaterializeResult:
    wh, name = warehouse.get(), context.partition_key
    try:
        settings = benchmark.pool()
    except ValueError as exc:
        raise dg.Failure(description=f"HVBENCH_POOL_TARGETS: {exc}", allow_retries=False) from exc
    rows = pool_inputs(wh)
    decisions = select_pool(rows, settings)
    by_id = {r["question_id"]: r for r in rows}
    out = [{"question_id": d.question_id, "video_id": d.video_id, "task": d.task, "abbrev": d.abbrev,
            "review_state": by_id[d.question_id]["state"], "stratum": d.stratum, "target": d.target,
            "selected": d.selected, "reason": d.reason, "question": by_id[d.question_id]["question"],
            "options": by_id[d.question_id]["options"], "answer": by_id[d.question_id]["answer"],
            "answer_text": by_id[d.question_id]["answer_text"], "video_path": by_id[d.question_id]["video_path"],
            "content_hash": by_id[d.question_id]["content_hash"]} for d in decisions]
    wh.replace(QUESTION_POOL, {"benchmark": name}, out,
               provenance={"backend": "rules", "model": None, "code_version": POOL_CODE_VERSION})
    summary = pool_summary(decisions)
    table = [[a, settings.target(a), s["available"], s["selected"],
              ", ".join(f"{k} {v}" for k, v in sorted(s["strata"].items())) or "-",
              "; ".join(f"{n}x {why}" for why, n in sorted(s["left_out"].items(), key=lambda kv: -kv[1])) or "-"]
             for a in ORDER if (s := summary.get(a))]
    return dg.MaterializeResult(metadata={
        "benchmark": name, "dagster/row_count": len(out), "selected": sum(d.selected for d in decisions),
        "include_unreviewed": settings.include_unreviewed, "strict_ratio": settings.strict_ratio,
        "per_task": dg.MetadataValue.md(_md(["task", "target", "available", "selected", "strata", "left out (why)"], table)),
    })


def _blind_models(benchmark: BenchmarkResource, mllm: MllmResource) -> tuple[list[str], str | None]:
    """(models, None) or ([], why there is none)."""
    try:
        registry = mllm.registry()
        names = benchmark.blind_model_names() or [m.name for m in registry.active()]
        for n in names:
            registry.get(n)
    except (ModelNotConfigured, ValueError, OSError) as exc:
        return [], str(exc)
    if not names:
        return [], ("no answering model is configured: set HVBENCH_MLLM_<NAME>_BASE_URL and _MODEL for a text "
                    "model (and HVBENCH_BLIND_MODELS=<name>, or HVBENCH_MLLM_MODELS)")
    return names, None


@dg.asset(
    name="blind_leakage",
    partitions_def=eval_benchmarks_partitions,
    deps=["question_pool"],
    group_name="benchmark",
    kinds={"python", "duckdb", "openai"},
    code_version=f"{LEAKAGE_CODE_VERSION}:{BLIND_PROMPT_VERSION}:{TEXTBIAS_CODE_VERSION}:{REPAIR_CODE_VERSION}",
    pool="mllm",
    description="Every pooled question answered without its video by each blind model under every option rotation; "
                "questions right clearly above chance go back to the perturbation step (repair rounds), else are "
                "removed. Also scores how well the texts alone predict each answer (text_bias, no model call)",
    metadata=table_definition(LEAKAGE_VERDICTS, BLIND_ANSWERS, LEAKAGE_REPAIRS, TEXT_BIAS, SYNTHESIS_STEPS),
)
def blind_leakage(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                  mllm: MllmResource, benchmark: BenchmarkResource) -> dg.MaterializeResult:
    wh, name = warehouse.get(), context.partition_key
    pooled = [r for r in wh.rows(QUESTION_POOL, benchmark=name) if r["selected"]]
    models, why_not = _blind_models(benchmark, mllm)
    prov = {"backend": "rules", "model": None, "code_version": f"{LEAKAGE_CODE_VERSION}:{BLIND_PROMPT_VERSION}"}
    key = {"benchmark": name}
    bias = text_bias(items_from_pool(pooled), alpha=benchmark.leakage_alpha)
    bias_table = (TEXT_BIAS, key, item_rows(bias), {"backend": "rules", "model": None, "code_version": TEXTBIAS_CODE_VERSION})
    if not models:
        rows = [{"question_id": r["question_id"], "task": r["task"], "n_options": len(r["options"]), "n_answers": 0,
                 "n_correct": 0, "n_failed": 0, "chance": 1 / len(r["options"]), "p_value": 1.0, "removed": False,
                 "reason": f"not tested: {why_not}"} for r in pooled]
        _write_leakage(wh, name, [(BLIND_ANSWERS, key, [], prov), (LEAKAGE_VERDICTS, key, rows, prov),
                                  (LEAKAGE_REPAIRS, key, [], prov), bias_table], {}, pooled)
        context.log.warning(f"leakage filter not run: {why_not}")
        return dg.MaterializeResult(metadata={"benchmark": name, "tested": False, "why_not": why_not,
                                              "pooled": len(pooled), "removed": 0,
                                              "text_bias": dg.MetadataValue.md(_bias_md(bias))})
    if benchmark.blind_rotations not in ("all", "none"):
        raise dg.Failure(description=f"HVBENCH_BLIND_ROTATIONS must be all or none, got {benchmark.blind_rotations!r}",
                         allow_retries=False)
    client = mllm.client(wh)
    jobs = blind_jobs(pooled, models, all_rotations=benchmark.blind_rotations == "all")
    answers = answer_blind(client, jobs, params={"temperature": 0})
    verdicts = leakage_verdicts(answers, alpha=benchmark.leakage_alpha, max_share=benchmark.leakage_max_share)
    first_verdicts = verdicts
    writer, no_writer = _repair_writer(benchmark, mllm)
    if no_writer and any(v.removed for v in verdicts):
        context.log.warning(f"blind-answered questions are removed, not repaired: {no_writer}")
    repair = repair_leaky(client, writer, pooled, answers, verdicts, models, benchmark.repair_rounds,
                          alpha=benchmark.leakage_alpha, max_share=benchmark.leakage_max_share,
                          all_rotations=benchmark.blind_rotations == "all", params={"temperature": 0})
    answers, verdicts = repair.answers, repair.verdicts
    stored = [{k: v for k, v in a.items() if k not in ("transient", "fatal")} for a in answers]
    verdict_rows = [{**v.__dict__, "repair_round": repair.repaired_round.get(v.question_id),
                     "repaired_options": repair.options.get(v.question_id)} for v in verdicts]
    _write_leakage(wh, name, [
        (BLIND_ANSWERS, key, stored, {**prov, "backend": "mllm"}),
        (LEAKAGE_VERDICTS, key, verdict_rows, prov), bias_table,
        (LEAKAGE_REPAIRS, key, repair.steps, {**prov, "backend": "mllm", "model": writer}),
    ], synthesis_step_rows(repair, pooled, first_verdicts, name, writer), pooled)
    fatal = [a for a in answers if a["fatal"]]
    if fatal:
        raise dg.Failure(description=f"blind model misconfigured: {fatal[0]['method']}", allow_retries=False)
    transient = sum(a["transient"] for a in answers)
    failed = sum(a["status"] == "failed" for a in answers)
    if failed:
        context.log.warning(f"{failed} blind call(s) failed (see blind_answers.method); their questions are judged "
                            "on the other answers, or 'not tested' when none came back")
    per_task = {t: [c["pooled"], c["tested"], c["removed"], c["repaired"]] for t, c in repair_counts(verdict_rows).items()}
    metadata = {
        "benchmark": name, "tested": True, "models": ", ".join(models), "pooled": len(pooled),
        "removed": sum(v.removed for v in verdicts), "repaired": len(repair.repaired_round),
        "repair_rounds": benchmark.repair_rounds, "repair_writer": writer or f"none: {no_writer}",
        "blind_answers": len(answers), "failed_calls": failed,
        "requests_sent": client.requests_sent, "alpha": benchmark.leakage_alpha, "max_share": benchmark.leakage_max_share,
        "per_task": dg.MetadataValue.md(_md(["task", "pooled", "tested", "removed", "repaired"],
                                            [[t, *c] for t, c in sorted(per_task.items())])),
        "most_guessable": dg.MetadataValue.md(_md(
            ["question", "task", "right / asked", "p", "removed"],
            [[v.question_id, v.task, f"{v.n_correct}/{v.n_answers}", f"{v.p_value:.3g}", v.removed]
             for v in guessable(verdicts)])),
        "text_bias": dg.MetadataValue.md(_bias_md(bias)),
    }
    report = Path(settings.data_dir) / "reports" / name / "leakage.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(f"# Blind leakage filter: {name}\n\nModels: {', '.join(models)}; rotations: "
                      f"{benchmark.blind_rotations}; removed when p < {benchmark.leakage_alpha} (one-sided binomial "
                      f"test against 1/options) or share > {benchmark.leakage_max_share}; up to "
                      f"{benchmark.repair_rounds} repair round(s) by {writer or 'no writer (' + str(no_writer) + ')'} "
                      "before removal.\n\n## Per task\n\n"
                      f"{metadata['per_task'].value}\n\n## Most guessable\n\n{metadata['most_guessable'].value}\n\n"
                      f"## Text bias (texts alone, no model)\n\n{metadata['text_bias'].value}\n\n"
                      "## Removed\n\n" + (_md(["question", "task", "why"], [[v.question_id, v.task, v.reason]
                                                                             for v in verdicts if v.removed]))
                      + "\n\n## Repaired\n\n" + _md(["question", "task", "round", "verdict"], [
                          [v.question_id, v.task, repair.repaired_round[v.question_id], v.reason]
                          for v in verdicts if v.question_id in repair.repaired_round]) + "\n")
    metadata.update(file_paths(report=report))
    if transient:  # answered rows are cached: a rerun asks only the failed ones
        raise dg.Failure(description=f"{transient} blind call(s) failed after retries (endpoint down or rate "
                                     "limited); rerun to ask only those", metadata=metadata)
    return dg.MaterializeResult(metadata=metadata)


def _write_leakage(wh, name: str, items: list, repair_steps: dict[str, list[dict]], pooled: list[dict]) -> None:
    """The leakage tables and the repair rounds appended to the questions' synthesis_steps, in one transaction
    (a rerun replaces this benchmark's earlier rounds there)."""
    def build(con):
        def read(sql, params):
            cur = con.execute(sql, params)
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]
        return items + repair_step_items(read, SYNTHESIS_STEPS, name, repair_steps,
                                         {r["question_id"]: r for r in pooled}, REPAIR_CODE_VERSION)

    wh.read_then_replace([spec for spec, *_ in items] + [SYNTHESIS_STEPS], build)


def _bias_md(bias: TextBias) -> str:
    """Per task: how often a classifier of the question and option texts alone picks the truth."""
    return _md(["task", "items", "predicted from text", "chance", "p", "predictable"],
               [[t, b.n_items, "-" if b.accuracy is None else f"{b.n_hits} ({100 * b.accuracy:.0f} %)",
                 f"{100 * b.chance:.0f} %", "-" if b.p_value is None else f"{b.p_value:.3g}",
                 "yes" if b.predictable else ("no" if b.accuracy is not None else b.note)]
                for t, b in sorted(bias.tasks.items())])


def _repair_writer(benchmark: BenchmarkResource, mllm: MllmResource) -> tuple[str | None, str | None]:
    """(the writer of repairs: the synthesis describer, None) or (None, why there is none)."""
    if benchmark.repair_rounds <= 0:
        return None, "HVBENCH_LEAKAGE_REPAIR_ROUNDS is 0"
    try:
        return mllm.registry().describer().name, None
    except (ModelNotConfigured, ValueError, OSError) as exc:
        return None, str(exc)


def _leak_status(v: dict | None) -> str:
    if v is None:
        return "not_tested: not in the leakage run"
    if not v["n_answers"]:
        return v["reason"]
    return f"kept: {v['reason']}"


def export_items(wh, name: str) -> tuple[list[dict], list[dict]]:
    """(items to export, pooled items left out by the leakage filter)."""
    verdicts = {v["question_id"]: v for v in wh.rows(LEAKAGE_VERDICTS, benchmark=name)}
    items, removed = [], []
    for r in wh.rows(QUESTION_POOL, benchmark=name, order_by="task, video_id, question_id"):
        if not r["selected"]:
            continue
        v = verdicts.get(r["question_id"])
        if v is not None and v["removed"]:
            removed.append({"question_id": r["question_id"], "task": r["task"], "reason": f"leakage: {v['reason']}"})
            continue
        if v is not None and v.get("repaired_options"):  # new wrong options from a repair round
            r = {**r, "options": v["repaired_options"], "content_hash": hashlib.sha256(json.dumps(
                [r["content_hash"], v["repaired_options"]], sort_keys=True).encode()).hexdigest()[:16]}
        items.append({**r, "leakage": _leak_status(v)})
    return items, removed


def assemble_items(items: list[dict]) -> tuple[list[dict], dict]:
    """The export items with their answer letters balanced per task (core/benchmark/letters.py) over the items
    that have a question video (it is exported as rendered: the person numbers on it stay).
    Returns (items, letters section of the manifest)."""
    present = [i for i in items if (p := resolve(i.get("video_path"))) is not None and p.is_file()]
    assembled = assemble_letters(present)
    out = []
    for item in items:
        a = assembled.get(item["question_id"])
        if a is None:
            out.append(item)
            continue
        answer_text = next(o["text"] for o in a.options if o["letter"] == a.answer)
        new = {**item, "options": a.options, "answer": a.answer, "answer_text": answer_text,
               "stored_answer": a.stored_answer, "letter_order": a.order}
        out.append(new)
    counts = letter_counts(assembled, {i["question_id"]: i["task"] for i in present})
    return out, {"rule": LETTER_RULE_VERSION, "per_task": counts,
                 "how": "per task, each answer moved to the letter furthest below its fair share, in the order of "
                        "a hash of the question ids; ties keep the stored letter"}


def manifest_facts(wh, items: list[dict], benchmark: BenchmarkResource, name: str) -> dict:
    """Code versions and label provenance of the exported questions."""
    ids = {i["question_id"] for i in items}
    questions = [q for q in wh.rows(QUESTIONS) if q["question_id"] in ids]
    labels = sorted({(r.get("label"), r.get("table"), r.get("backend"), r.get("model"), r.get("code_version"))
                     for q in questions for r in q.get("label_rows") or []}, key=str)
    rule_versions: dict[str, list[str]] = {}
    for q in questions:
        rule_versions.setdefault(q["task"], [])
        if q["rule_version"] not in rule_versions[q["task"]]:
            rule_versions[q["task"]].append(q["rule_version"])
    verdicts = wh.rows(LEAKAGE_VERDICTS, benchmark=name)
    tested = [v for v in verdicts if v["n_answers"]]
    models = sorted({r["model"] for r in wh.rows(BLIND_ANSWERS, benchmark=name)})
    return {
        "benchmark": name,
        "review_states_exported": list(benchmark.pool().states()), "include_unreviewed": benchmark.include_unreviewed,
        "leakage": {"tested_items": len(tested), "models": models, "alpha": benchmark.leakage_alpha,
                    "max_share": benchmark.leakage_max_share, "rotations": benchmark.blind_rotations,
                    "status": "tested" if tested else (verdicts[0]["reason"] if verdicts else "not run")},
        "code_versions": {"pool": POOL_CODE_VERSION, "leakage": f"{LEAKAGE_CODE_VERSION}:{BLIND_PROMPT_VERSION}",
                          "export": EXPORT_CODE_VERSION, "letters": LETTER_RULE_VERSION, "task_rules": rule_versions},
        "labels": [dict(zip(("label", "table", "backend", "model", "code_version"), lab)) for lab in labels],
        "text_bias": manifest_section(text_bias(items_from_pool(items), alpha=benchmark.leakage_alpha)),
    }


@dg.asset(
    name="benchmark_export",
    partitions_def=eval_benchmarks_partitions,
    deps=["blind_leakage"],
    group_name="benchmark",
    kinds={"python", "json", "video"},
    # the manifest holds text bias; every line its evidence; the yes/no and open folders are written beside it
    code_version=f"{EXPORT_CODE_VERSION}:{LETTER_RULE_VERSION}:{TEXTBIAS_CODE_VERSION}:{EVIDENCE_VERSION}:"
                 f"{DERIVED_VERSIONS}",
    description="The benchmark in the published HumanVBench layout (16 task JSONL files, question videos, manifest.json), "
                "each item with the evidence its truth rests on, and its yes/no and open-ended folders beside it",
    metadata=table_definition(EXPORT_ITEMS),
    check_specs=[
        dg.AssetCheckSpec("answer_letter_balance", asset="benchmark_export",
                          description="Per task, every answer letter within its fair share + 1 (core/benchmark/letters.py)"),
        dg.AssetCheckSpec("leakage_removal_share", asset="benchmark_export",
                          description=f"The blind leakage filter removed at most {MAX_LEAKAGE_REMOVED_SHARE:.0%} of "
                                      "the pooled questions (more: the questions give their answers away)"),
        dg.AssetCheckSpec("export_file_count", asset="benchmark_export",
                          description="Each format's folder holds the 16 task files, manifest.json and every exported "
                                      "item's video"),
    ],
)
def benchmark_export(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                     benchmark: BenchmarkResource) -> dg.MaterializeResult:
    wh, name = warehouse.get(), context.partition_key
    folder = benchmark.folder(settings.data_dir, name)
    if (fmt := format_of(folder)) not in (None, MC):  # <name>_yesno / _open: written with their source's export
        raise dg.Failure(description=f"{folder} is a {FORMAT_NAMES[fmt]} export written beside another "
                                     "benchmark's; materialize benchmark_export for that benchmark instead",
                         allow_retries=False)
    items, removed = export_items(wh, name)
    items, letters = assemble_items(items)
    evidence = item_evidence(wh, items)
    items = [{**i, "extra": {EVIDENCE_FIELD: evidence[i["question_id"]]}} for i in items]
    try:
        for where, _ in DERIVED.values():  # before anything is written: a folder that is not ours stops it
            check_replaceable(where(folder))
        result = export_benchmark(items, folder, {
            **manifest_facts(wh, items, benchmark, name), "letters": letters, "removed_by_leakage": removed,
            "evidence": evidence_summary(evidence, {i["question_id"]: i["task"] for i in items})})
        bench = load_benchmark(folder, name=name)
        derived = {fmt: write_derived(bench, fmt) for fmt in DERIVED}
    except ExportError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    rows = [{**i, "folder": to_stored(folder)} for i in result.items]
    wh.replace(EXPORT_ITEMS, {"benchmark": name}, rows,
               provenance={"backend": "rules", "model": None, "code_version": EXPORT_CODE_VERSION})
    for item in result.left_out:
        context.log.warning(f"left out {item['question_id']} ({item['task']}): {item['reason']}")
    states: dict[str, dict[str, int]] = {}
    for i in result.items:
        per = states.setdefault(i["task"], {})
        per[i["review_state"]] = per.get(i["review_state"], 0) + 1
    grounded = result.manifest["evidence"]["per_task"]
    table = [[t.abbrev, result.counts[t.name], *(d.counts[t.name] for _, d in derived.values()),
              _grounding(grounded.get(t.name)),
              ", ".join(f"{k} {v}" for k, v in sorted(states.get(t.name, {}).items())) or "-",
              sum(r["task"] == t.name for r in removed), sum(r["task"] == t.name for r in result.left_out)]
             for t in TASKS]
    # the data version is what was exported, so an identical re-export does not mark evaluations stale
    hashes = {i["question_id"]: i["content_hash"] for i in items}
    content = sorted((i["question_id"], hashes[i["question_id"]], i["answer"], i["video"]) for i in result.items)
    version = hashlib.sha256(json.dumps(content).encode()).hexdigest()[:16]
    checks = [letter_balance_check(result.items, {i["question_id"]: len(i["options"]) for i in items}),
              leakage_share_check(len(items) + len(removed), len(removed)),
              export_files_check(folder, result.items, {fmt: (f, d.items) for fmt, (f, d) in derived.items()})]
    return dg.MaterializeResult(data_version=dg.DataVersion(version), check_results=checks, metadata={
        **file_paths(folder=folder, manifest=folder / "manifest.json",
                     **{f"{fmt}_folder": f for fmt, (f, _) in derived.items()}),
        "benchmark": name, "items": len(result.items),
        "items_per_format": dg.MetadataValue.json({FORMAT_NAMES[MC]: len(result.items),
                                                   **{FORMAT_NAMES[fmt]: len(d.items) for fmt, (_, d) in derived.items()}}),
        "include_unreviewed": benchmark.include_unreviewed,
        "removed_by_leakage": len(removed), "left_out_no_video": len(result.left_out),
        "per_task": dg.MetadataValue.md(_md(
            ["task", "items", *(FORMAT_NAMES[fmt] for fmt in derived), "evidence: span, boxes", "review states",
             "removed by leakage", "no video"], table)),
    })


def _grounding(counts: dict | None) -> str:
    """'span n/N, boxes m/N' of a task's exported items."""
    return f"span {counts['span']}/{counts['items']}, boxes {counts['boxes']}/{counts['items']}" if counts else "-"


def letter_balance_check(exported: list[dict], n_options: dict[str, int]) -> dg.AssetCheckResult:
    """Per task: answer counts per letter against the fair share (sum of 1/n over the items offering it)."""
    used: dict[str, dict[str, int]] = {}
    fair: dict[str, dict[str, float]] = {}
    for i in exported:
        n = n_options.get(i["question_id"]) or 0
        used.setdefault(i["task"], {}).setdefault(i["answer"], 0)
        used[i["task"]][i["answer"]] += 1
        for c in string.ascii_uppercase[:n]:
            fair.setdefault(i["task"], {})[c] = fair.get(i["task"], {}).get(c, 0.0) + 1 / n
    off = {f"{t}:{c}": f"{used[t].get(c, 0)} vs fair {share:.2f}" for t in fair for c, share in fair[t].items()
           if abs(used[t].get(c, 0) - share) > 1 + 1e-9}
    return dg.AssetCheckResult(check_name="answer_letter_balance", asset_key="benchmark_export", passed=not off,
                               severity=dg.AssetCheckSeverity.WARN,
                               metadata={"answers_per_letter": dg.MetadataValue.json(used), "off_balance": dg.MetadataValue.json(off)})


def leakage_share_check(pooled: int, removed: int) -> dg.AssetCheckResult:
    share = removed / pooled if pooled else 0.0
    return dg.AssetCheckResult(check_name="leakage_removal_share", asset_key="benchmark_export",
                               passed=share <= MAX_LEAKAGE_REMOVED_SHARE, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"pooled": pooled, "removed": removed, "share": round(share, 4),
                                         "threshold": MAX_LEAKAGE_REMOVED_SHARE})


def _folder_problems(folder: Path, exported: list[dict]) -> tuple[list[str], int, int]:
    """(problems, task files, videos present) of one export folder."""
    jsonl = sorted(p.name for p in folder.glob("*.jsonl"))
    missing = [i["video"] for i in exported if not (folder / i["video"]).is_file()]
    problems = ([f"{len(jsonl)} task files, expected {len(TASKS)}"] if len(jsonl) != len(TASKS) else []) + \
        ([] if (folder / "manifest.json").is_file() else ["manifest.json missing"]) + \
        ([f"{len(missing)} video(s) missing, e.g. {missing[0]}"] if missing else [])
    return problems, len(jsonl), len(exported) - len(missing)


def export_files_check(folder: Path, exported: list[dict],
                       derived: dict[str, tuple[Path, list[dict]]] | None = None) -> dg.AssetCheckResult:
    """16 task JSONL files + manifest.json + one video per exported item, all on disk, in the multiple-choice
    folder and in each `derived` format's (format -> (folder, its exported items))."""
    problems, files, videos = _folder_problems(folder, exported)
    for fmt, (where, its_items) in (derived or {}).items():
        problems += [f"{FORMAT_NAMES[fmt]}: {p}" for p in _folder_problems(where, its_items)[0]]
    return dg.AssetCheckResult(check_name="export_file_count", asset_key="benchmark_export", passed=not problems,
                               metadata={"task_files": files, "videos": videos, "items": len(exported),
                                         "problems": "; ".join(problems) or "none"})


benchmark_job = dg.define_asset_job(
    "benchmark_job", selection=dg.AssetSelection.assets(question_pool, blind_leakage, benchmark_export),
    partitions_def=eval_benchmarks_partitions,
    description="Pool the reviewed questions, filter blind-answerable ones, export the benchmark folder",
)
