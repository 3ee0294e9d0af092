"""Evaluation assets: one `eval_responses` partition per (benchmark, model), one `eval_report` per benchmark.

The work is in core/evaluation (runner, resume) and core/scoring (report); these assets resolve the
benchmark folder and the model client, call it, and surface the numbers as metadata.
"""


from collections import Counter
from pathlib import Path

import dagster as dg

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.evaluation import EvalConfig, MllmAnswerer, ModelMisconfigured, evaluate
from hvbench_assets.core.evaluation.prompt import PROMPT_VERSION
from hvbench_assets.core.evaluation.arms import ArmUnavailable
from hvbench_assets.core.evaluation.tables import (
    EVAL_DISTRACTORS,
    EVAL_ITEM_STATS,
    EVAL_RESPONSES,
    EVAL_RUNS,
    EVAL_TASK_SCORES,
)
from hvbench_assets.core.evaluation.reporting import REPORT_CODE_VERSION, report_for
from hvbench_assets.core.evaluation.runner import EVAL_CODE_VERSION
from hvbench_assets.core.mllm import ModelNotConfigured
from hvbench_assets.core.scoring.judge import JUDGE_PROMPT_VERSION
from hvbench_assets.core.scoring.metrics import aggregate, task_scores
from hvbench_assets.core.scoring import svg
from hvbench_assets.core.scoring.report import charts, load_baseline_file, pct, render_markdown
from hvbench_assets.defs.evaluation.partitions import (
    eval_benchmarks_partitions,
    eval_partitions,
)
from hvbench_assets.defs.metadata import image, table_definition
from hvbench_assets.defs.metadata import paths as file_paths
from hvbench_assets.defs.resources import EvaluationResource, MllmResource, SettingsResource, WarehouseResource


def _benchmark_root(name: str, evaluation: EvaluationResource, settings: SettingsResource) -> tuple[Path, Path | None]:
    roots = evaluation.roots(settings.data_dir)
    if name not in roots:
        raise dg.Failure(description=f"benchmark {name!r} not found: known {sorted(roots) or 'none'}; put it under "
                                     f"{evaluation.benchmarks_dir or Path(settings.data_dir) / 'benchmarks'} or add "
                                     f"'{name}=/path' to HVBENCH_BENCHMARK_ROOTS", allow_retries=False)
    return roots[name]


def _summary(rows: list[dict]):
    scores = task_scores([r for r in rows if r["status"] != "failed" and r["rotation"] == 0])
    return scores, aggregate({t: s.accuracy for t, s in scores.items()})


def score_metadata(summary, prefix: str = "") -> dict[str, dg.MetadataValue]:
    """Overall and per-category accuracy (%) as float metadata, which the UI plots over materializations
    (keys `<prefix>overall_pct`, `<prefix>category_pct/<category>`; absent when the value is unknown)."""
    out = {f"{prefix}overall_pct": summary.overall} | {
        f"{prefix}category_pct/{cat}": v for cat, v in summary.categories.items()}
    return {k: dg.MetadataValue.float(round(100 * v, 2)) for k, v in out.items() if v is not None}


def _scores_markdown(rows: list[dict]) -> str:
    scores, summary = _summary(rows)
    lines = ["| task | items | correct | unparsed | accuracy % |", "|---|---|---|---|---|"]
    lines += [f"| {t} | {s.n_items} | {s.n_correct} | {s.n_unparsed} | {pct(s.accuracy)} |" for t, s in scores.items()]
    lines += [f"| **{cat}** | | | | {pct(v)} |" for cat, v in summary.categories.items() if v is not None]
    lines.append(f"| **Overall ({summary.n_tasks} tasks)** | | | | {pct(summary.overall)} |")
    return "\n".join(lines)


@dg.asset(
    name="eval_responses",
    partitions_def=eval_partitions,
    # a benchmark we export is benchmark_export's partition of the same name: a new export marks its evaluations stale
    deps=[dg.AssetDep("benchmark_export",
                      partition_mapping=dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="benchmark"))],
    group_name="evaluation",
    kinds={"duckdb", "openai"},
    code_version=f"{EVAL_CODE_VERSION}:{PROMPT_VERSION}:{JUDGE_PROMPT_VERSION}",
    pool="mllm",
    description="Every reply of one model to every item of one benchmark: raw text, parsed option, correctness, latency, tokens",
    metadata=table_definition(EVAL_RESPONSES, EVAL_RUNS),
    check_specs=[dg.AssetCheckSpec("unparsed_rate", asset="eval_responses",
                                   description="Share of replies no rule could map to an option (counted wrong)")],
)
def eval_responses(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                   mllm: MllmResource, evaluation: EvaluationResource) -> dg.MaterializeResult:
    keys = context.partition_key.keys_by_dimension
    name, model = keys["benchmark"], keys["model"]
    root, video_root = _benchmark_root(name, evaluation, settings)
    wh = warehouse.get()
    try:
        configs: list[EvalConfig] = evaluation.configs_for(model)
    except ValueError as exc:  # an unknown arm name: say which setting, not a traceback
        raise dg.Failure(description=f"HVBENCH_EVAL_ARMS={evaluation.arms!r}: {exc}", allow_retries=False) from None
    try:  # configuration first: a wrong model name must not wait for the benchmark to load
        answerer = MllmAnswerer(mllm.client(wh))
        for needed in dict.fromkeys([model] + [c.judge_model for c in configs if c.judge_model]):
            answerer.accepts_audio(needed)
    except (ModelNotConfigured, ValueError, OSError) as exc:
        raise dg.Failure(description=f"model {model!r}: {exc}", allow_retries=False) from None
    bench = load_benchmark(root, video_root=video_root, name=name)
    for issue in bench.issues:
        context.log.warning(f"skipped {issue}")
    for warning in bench.warnings:
        context.log.warning(str(warning))
    if bench.video_problem:
        raise dg.Failure(description=f"benchmark {name}: {bench.video_problem}; name the video folder in "
                                     f"HVBENCH_BENCHMARK_ROOTS as '{name}={root}|/path/to/videos'", allow_retries=False)
    if not bench.items:
        raise dg.Failure(description=f"benchmark {name}: no readable items under {root}", allow_retries=False)
    done = [0]

    def log_progress(row: dict) -> None:
        done[0] += 1
        if done[0] % 50 == 0:
            context.log.info(f"{done[0]} replies recorded")

    try:
        outs = []
        for cfg in configs:
            try:
                outs.append(evaluate(bench, answerer, wh, cfg, progress=False, on_result=log_progress))
            except ArmUnavailable as exc:  # this arm only: the model's other arms run
                context.log.warning(str(exc))
    except ModelMisconfigured as exc:  # a wrong key or endpoint: retrying the step cannot help
        raise dg.Failure(description=f"{model} on {name}: {exc}", allow_retries=False) from None
    run_ids = [o.run_id for o in outs]
    rows = [r for run_id in run_ids for r in wh.query(
        "SELECT run_id, task, rotation, status, correct, method, latency_s, tokens_in, tokens_out "
        "FROM eval_responses WHERE run_id = ?", [run_id])]
    failed = sum(o.failed for o in outs)
    transient = sum(o.transient for o in outs)
    metadata = {
        "run_ids": run_ids, "benchmark_root": str(root), "asked_now": sum(o.asked for o in outs),
        "already_answered": sum(o.skipped for o in outs), "failed_calls": failed,
        "status": "complete" if all(o.status == "complete" for o in outs) else "partial",
        "skipped_lines": len(bench.issues), "rows": len(rows), "unparsed": sum(r["status"] == "unparsed" for r in rows),
        "tokens_in": sum(r["tokens_in"] or 0 for r in rows), "tokens_out": sum(r["tokens_out"] or 0 for r in rows),
        "scores": dg.MetadataValue.md("\n\n".join(
            (f"**{run_id}**\n\n" if len(run_ids) > 1 else "") + _scores_markdown([r for r in rows if r["run_id"] == run_id])
            for run_id in run_ids)),
    }
    if transient:  # the endpoint was down or rate limited beyond the client's retries: worth a rerun
        raise dg.Failure(description=f"{transient} call(s) to {model} on {name} failed after retries (endpoint down "
                                     "or rate limited); every answered item is stored and a re-materialization asks "
                                     "only the rest", metadata=metadata)
    if failed:  # items the model could not answer (garbled or refused replies, unreadable videos): rows, not a crash
        context.log.warning(f"{failed} item(s) failed for {model} on {name}; see eval_responses.error "
                            "(they are asked again by the next materialization)")
    if len(run_ids) == 1:  # numbers to plot over time (several seeds: the report averages them)
        metadata.update(score_metadata(_summary(rows)[1]))
    unparsed = metadata["unparsed"] / max(1, len(rows))
    check = dg.AssetCheckResult(
        check_name="unparsed_rate", passed=unparsed <= evaluation.max_unparsed_rate,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"unparsed_rate": round(unparsed, 4), "threshold": evaluation.max_unparsed_rate,
                  "methods": dict(Counter(r["method"] for r in rows))},
        description="many replies ignore the letter-only instruction: read eval_responses.response, or add a judge"
        if unparsed > evaluation.max_unparsed_rate else None,
    )
    return dg.MaterializeResult(metadata=metadata, check_results=[check])


CHART_NAMES = ("chart_categories", "chart_tasks", "chart_distractors", "chart_items")  # report.charts' order


def report_charts(data, out_dir: Path) -> dict[str, dg.MetadataValue]:
    """The report's charts as PNG files in `out_dir`, shown inline on the asset page."""
    with svg.png_charts():
        pngs = charts(data)
    out: dict[str, dg.MetadataValue] = {}
    for name, png in zip(CHART_NAMES, pngs):
        path = out_dir / f"{name}.png"
        path.write_bytes(png)
        out.update(image(path, name))
    return out


def review_baseline(wh, name: str, evaluation: EvaluationResource, settings: SettingsResource) -> dict | None:
    """For a benchmark we exported: the reviewers' blind-choice accuracy per task on its items (None when nobody
    reviewed them)."""
    from hvbench_assets.core.benchmark.export import exported_question_ids, is_our_export
    from hvbench_assets.core.curation.agreement import human_baseline, reviewer_accuracy
    from hvbench_assets.core.curation.state import curate, excluded_tasks
    from hvbench_assets.core.curation.store import load_state

    roots = evaluation.roots(settings.data_dir)
    if name not in roots or not is_our_export(roots[name][0]) or not wh.has_table("review_decisions"):
        return None
    ids = exported_question_ids(roots[name][0])
    s = load_state(wh)
    questions = [q for q in s["questions"] if q["question_id"] in ids]
    reviewed = curate(questions, s["decisions"], excluded_tasks(settings.review_exclude), s["assignments"],
                      s["annotations"])
    return human_baseline(reviewer_accuracy(questions, s["decisions"], reviewed)) or None


@dg.asset(
    name="eval_report",
    partitions_def=eval_benchmarks_partitions,
    deps=[dg.AssetDep("eval_responses",
                      partition_mapping=dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="benchmark"))],
    group_name="evaluation",
    kinds={"duckdb", "html"},
    # the asset also writes the charts as PNG files; their legends name models by their ids (MllmResource)
    code_version=f"{REPORT_CODE_VERSION}:png-charts:model-names",
    description="Per-task / category / overall accuracy of every evaluated model, baselines, distractor and item statistics",
    metadata=table_definition(EVAL_TASK_SCORES, EVAL_ITEM_STATS, EVAL_DISTRACTORS),
)
def eval_report(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                evaluation: EvaluationResource, mllm: MllmResource) -> dg.MaterializeResult:
    name = context.partition_key
    human = load_baseline_file(evaluation.human_baseline) if evaluation.human_baseline else \
        review_baseline(warehouse.get(), name, evaluation, settings)
    out_dir = Path(settings.data_dir) / "reports" / name
    data, paths = report_for(warehouse.get(), name, human=human, out_dir=out_dir,
                             item_max_unparsed=evaluation.item_max_unparsed, stats=evaluation.stats(),
                             model_names=mllm.display_names())
    if not data.runs:
        raise dg.Failure(description=f"no evaluation runs for benchmark {name}: materialize eval_responses first",
                         allow_retries=False)
    scores = {k: v for label, summary in data.summaries.items() for k, v in score_metadata(summary, f"{label}/").items()}
    return dg.MaterializeResult(metadata={
        **report_charts(data, out_dir), **scores,
        "report": dg.MetadataValue.md(render_markdown(data)),
        **file_paths(html=paths["html"], markdown=paths["markdown"], flagged_items=paths["flagged"]),
        "left_out_of_item_stats": {g: round(r, 3) for g, r in data.excluded.items()},
        "runs": len(data.runs), "items": len({(s.task, s.question_id) for s in data.items}),
        "non_functional_distractors": sum(len(s.non_functional) for s in data.items),
        "overall_95ci_clip_clustered": {g: [round(100 * iv["overall"].low, 2), round(100 * iv["overall"].high, 2)]
                                        for g, iv in data.uncertainty.intervals.items()
                                        if iv.get("overall") and iv["overall"].low is not None},
    })
