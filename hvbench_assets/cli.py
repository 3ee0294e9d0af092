"""`hvbench` command line. Each command registers itself in COMMANDS (name -> (add_arguments, run)),
so other stages add theirs the same way without touching the dispatcher.

    hvbench eval --benchmark DIR --model NAME [--frames 8 | --fps 1] [--concurrency 4] [--limit N]
    hvbench report --benchmark DIR [--human baseline.csv] [--out DIR]
    hvbench lmms-export --benchmark DIR --out DIR / lmms-import --benchmark DIR --model M --samples F...
    hvbench aggregate scores.csv        (per-task numbers in, category averages and overall out)
    hvbench demo [--videos DIR]         (the main job on sample clips, printed)
    hvbench explain QUESTION_ID [--json] (source, labels, rule, model calls, leakage, review, evaluations)
    hvbench status                      (registered inbox files; what the inbox sensor passes over, and why)
    hvbench runs [--fail-dead]          (runs left in progress by a killed process; mark them failed)
    hvbench rerank --weight MODEL=W     (synthesis winners under other weights, from stored scores, no calls)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from hvbench_assets.settings_table import data_dir, warehouse_location

COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help_text: str, add_arguments: Callable[[argparse.ArgumentParser], None]):
    def register(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help_text, add_arguments, run)
        return run
    return register


def default_warehouse() -> Path:
    """Same default as the Dagster `warehouse` resource: HVBENCH_WAREHOUSE, else <data dir>/hvbench.duckdb.
    HVBENCH_WAREHOUSE may also be a DuckLake location (`ducklake:postgres:<conninfo>`, docs/scale-out.md)."""
    return warehouse_location()


def warehouse_exists(path: Path) -> bool:
    """A DuckLake location is not a file: it exists for the commands that read it (they say what is missing)."""
    from hvbench_assets.core.warehouse.ducklake import is_ducklake

    return is_ducklake(path) or path.exists()


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")
    p.add_argument("--benchmark", required=True,
                   help="benchmark folder (one JSONL per task) or, for report, a benchmark name already evaluated")
    p.add_argument("--name", default=None, help="benchmark name in the warehouse (default: the folder name)")


def _benchmark_name(args) -> str:
    return args.name or Path(args.benchmark).resolve().name


# -- eval --------------------------------------------------------------------------------------
def _eval_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--model", action="append", required=True,
                   help="model name from config/models.toml (repeat for several models, run one after another; "
                        "'active' = every active model: HVBENCH_MLLM_MODELS or all configured)")
    p.add_argument("--video-root", type=Path, default=None,
                   help="the folder `Video` paths are relative to (default: found automatically beside the task "
                        "files, in videos/ or in task-named folders)")
    sampling = p.add_mutually_exclusive_group()
    sampling.add_argument("--frames", type=int, default=None, help="evenly spaced frames per video (default 8)")
    sampling.add_argument("--fps", type=float, default=None, help="one frame per 1/fps seconds instead")
    p.add_argument("--max-side", type=int, default=768, help="longest frame side sent, pixels")
    p.add_argument("--audio", choices=("auto", "always", "never"), default="auto",
                   help="send the soundtrack: auto = to models whose registry entry accepts audio")
    p.add_argument("--arms", default="full",
                   help="modality arms, comma-separated: full (frames + audio), frames, audio, text, or 'all'; each "
                        "arm is its own run and the report compares them (default: full)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--limit", type=int, default=None, help="at most N items per task")
    p.add_argument("--tasks", default=None, help="comma-separated task names or acronyms (default: all)")
    p.add_argument("--circular", action="store_true", help="ask every rotation of the options")
    p.add_argument("--judge", default=None, help="model that maps unparsable replies to a letter (optional)")
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--repeats", type=int, default=1,
                   help="runs per model with request seeds 0..N-1; the report shows their mean and spread")
    p.add_argument("--models-file", default=None, help="model registry (default: HVBENCH_MODELS_FILE, else config/models.toml)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--report", action="store_true", help="write the benchmark report afterwards")


def _run_eval(args: argparse.Namespace) -> int:
    from hvbench_assets.core.evaluation import mllm_answerer
    from hvbench_assets.settings_table import model_registry, value
    from hvbench_assets.core.mllm import ModelNotConfigured
    from hvbench_assets.settings_table import open_warehouse

    warehouse = open_warehouse(args.warehouse)
    params = {"temperature": args.temperature} if args.temperature is not None else None
    try:  # configuration before any item is read: a wrong model name costs nothing
        answerer = mllm_answerer(warehouse, model_registry(args.models_file), max_concurrency=args.concurrency,
                                 params=params, max_attempts=value("HVBENCH_MLLM_MAX_ATTEMPTS"))
        registry = answerer.client.registry
        models = list(dict.fromkeys(args.model))
        if "active" in models:
            active = [m.name for m in registry.active()]
            models = [m for m in models if m != "active"] + [m for m in active if m not in models]
            print(f"models: {', '.join(models) or 'none configured'}", file=sys.stderr)
        for name in models + ([args.judge] if args.judge else []):
            registry.get(name)
    except (ModelNotConfigured, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not models:
        print("error: no model to evaluate (HVBENCH_MLLM_MODELS is empty and no registry entry is configured)",
              file=sys.stderr)
        return 2
    import threading  # the HTTP client and the call-cache index get ready while the benchmark loads

    warm = threading.Thread(target=answerer.warm_up, args=(models[0],), daemon=True, name="eval-warm-up")
    warm.start()
    code = _eval_models(args, answerer, warehouse, models)
    warm.join()  # never leave the process while it holds the warehouse
    return code


def _eval_models(args: argparse.Namespace, answerer, warehouse, models: list[str]) -> int:
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.evaluation import EvalConfig, ModelMisconfigured, evaluate
    from hvbench_assets.core.evaluation.arms import ArmUnavailable, parse_arms
    from hvbench_assets.core.mllm import ModelNotConfigured

    try:
        arms = parse_arms(args.arms)
    except ValueError as exc:
        print(f"error: --arms: {exc}", file=sys.stderr)
        return 2
    bench = load_benchmark(args.benchmark, video_root=args.video_root, name=_benchmark_name(args))
    for issue in bench.issues:
        print(f"skipped {issue}", file=sys.stderr)
    for warning in bench.warnings:
        print(f"warning {warning}", file=sys.stderr)
    if not bench.items:
        print(f"no items in {args.benchmark}", file=sys.stderr)
        return 2
    if bench.video_problem:
        print(f"error: {bench.video_problem}. Pass --video-root DIR, the folder the `Video` paths in the task files "
              "are relative to.", file=sys.stderr)
        return 2
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip()) if args.tasks else None
    _term_as_interrupt()
    code = 0
    seeds = list(range(args.repeats)) if args.repeats > 1 else [None]
    for model, seed, arm in ((m, k, a) for m in models for k in seeds for a in arms):
        cfg = EvalConfig(model=model, n_frames=None if args.fps else (args.frames or 8), fps=args.fps,
                         max_side=args.max_side, audio=args.audio, circular=args.circular, judge_model=args.judge,
                         concurrency=args.concurrency, limit=args.limit, tasks=tasks, seed=seed, arm=arm)
        try:
            out = evaluate(bench, answerer, warehouse, cfg, progress=not args.no_progress)
        except ArmUnavailable as exc:  # this arm only, for this model: the others run
            print(f"note: {exc}", file=sys.stderr)
            continue
        except (ModelNotConfigured, ModelMisconfigured) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: answered items are stored; run the same command again to resume", file=sys.stderr)
            return 130
        print(f"{out.run_id}{'' if arm == 'full' else f' [{arm}]'}: asked {out.asked}, already answered {out.skipped}, recorded {out.answered}, "
              f"failed {out.failed} ({out.status})")
        if out.failed:
            code = 1
    if args.report:
        _write_report(warehouse, bench.name, None, None, print_md=False)
    return code


def _term_as_interrupt() -> None:
    """`kill` (SIGTERM) stops like Ctrl-C: in-flight replies are stored before the process exits."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


# -- report ------------------------------------------------------------------------------------
def _report_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--human", type=Path, default=None, help="human baseline: JSON {task: acc} or CSV task,accuracy")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: <data dir>/reports/<benchmark>)")
    p.add_argument("--run", action="append", default=None, help="only these run ids (repeatable)")
    p.add_argument("--quiet", action="store_true", help="do not print the Markdown report")
    p.add_argument("--item-max-unparsed", type=float, default=None,
                   help="leave models with a larger share of unparsed replies out of the item statistics "
                        "(default 0.5; 1 keeps every model)")
    p.add_argument("--bootstrap", type=int, default=None, help="bootstrap resamples of the intervals (default 2000)")
    p.add_argument("--bootstrap-seed", type=int, default=None, help="seed of the bootstrap (default 0)")
    p.add_argument("--slice-min-items", type=int, default=None,
                   help="demographic slices with fewer items show their count only (default 30)")


def _write_report(warehouse, name: str, human_file, out: Path | None, print_md: bool, run_ids=None,
                  item_max_unparsed: float | None = None, stats=None) -> int:
    from hvbench_assets.core.evaluation.reporting import benchmark_names, report_for
    from hvbench_assets.core.scoring.report import load_baseline_file, render_markdown

    if name not in benchmark_names(warehouse):
        known = ", ".join(benchmark_names(warehouse)) or "none"
        print(f"no evaluation runs for benchmark {name!r} in {warehouse.path} (known: {known})", file=sys.stderr)
        return 2
    human = load_baseline_file(human_file) if human_file else None
    extra = {} if item_max_unparsed is None else {"item_max_unparsed": item_max_unparsed}
    if stats is not None:
        extra["stats"] = stats
    data, paths = report_for(warehouse, name, human=human, run_ids=run_ids,
                             out_dir=out or data_dir() / "reports" / name, **extra)
    if print_md:
        print(render_markdown(data))
    for kind, path in paths.items():
        print(f"{kind}: {path}", file=sys.stderr)
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from hvbench_assets.settings_table import open_warehouse

    warehouse = open_warehouse(args.warehouse)
    return _write_report(warehouse, _benchmark_name(args), args.human, args.out, not args.quiet, args.run,
                         args.item_max_unparsed, _stats_settings(args))


def _stats_settings(args: argparse.Namespace):
    from dataclasses import replace

    from hvbench_assets.core.scoring.uncertainty import StatsSettings

    given = {k: v for k, v in (("n_boot", args.bootstrap), ("seed", args.bootstrap_seed),
                               ("slice_min_items", args.slice_min_items)) if v is not None}
    if given.get("n_boot", 1) < 1 or given.get("slice_min_items", 1) < 1:
        raise SystemExit("--bootstrap and --slice-min-items must be at least 1")
    return replace(StatsSettings(), **given)


# -- aggregate ---------------------------------------------------------------------------------
def _aggregate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scores", type=Path, help="CSV, TSV or Markdown table: first column the model, a header row of task "
                                              "names or acronyms (a category row above it is fine, Avg columns are "
                                              "ignored), '-' for a missing task; or JSON {model: {task: acc}}")


def _run_aggregate(args: argparse.Namespace) -> int:
    from hvbench_assets.core.benchmark.tasks import CATEGORIES, TASKS
    from hvbench_assets.core.scoring.metrics import VISION_CATEGORIES, aggregate
    from hvbench_assets.core.scoring.score_table import ScoreTableError, read_score_table

    try:
        table = read_score_table(args.scores)
    except ScoreTableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def cell(value, have: int, full: int) -> str:  # a mean over fewer tasks than its column says is marked
        if value is None:
            return "-"
        return f"{value:.2f}" if have == full else f"{value:.2f} ({have}/{full})"

    n_vision = sum(t.category in VISION_CATEGORIES for t in TASKS)
    print("| Model | " + " | ".join(CATEGORIES) + f" | {n_vision} vision tasks | Overall ({len(TASKS)} tasks) "
          "| Partial mean (tasks) |")
    print("|---" * (len(CATEGORIES) + 4) + "|")
    for model, tasks in table.items():
        s = aggregate(tasks)
        n_vis = sum(s.category_coverage[c] for c in VISION_CATEGORIES)
        cells = [cell(s.categories[c], s.category_coverage[c], 4) for c in CATEGORIES]
        cells += [cell(s.vision_avg, n_vis, n_vision), f"{s.overall:.2f}" if s.complete else "-",
                  "-" if s.complete or s.overall is None else f"{s.overall:.2f} ({s.n_tasks}/{len(TASKS)})"]
        print(f"| {model} | " + " | ".join(cells) + " |")
    return 0


# -- lmms-eval interop -------------------------------------------------------------------------
def _lmms_export_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--video-root", type=Path, default=None, help="as for eval")
    p.add_argument("--out", type=Path, required=True, help="folder to write the task folder into (lmms-eval --include_path)")


def _lmms_export(args: argparse.Namespace) -> int:
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.evaluation.lmms import export_lmms_task, group_name

    bench = load_benchmark(args.benchmark, video_root=args.video_root, name=_benchmark_name(args))
    for issue in bench.issues:
        print(f"skipped {issue}", file=sys.stderr)
    if not bench.items:
        print(f"no items in {args.benchmark}", file=sys.stderr)
        return 2
    folder = export_lmms_task(bench, args.out)
    print(f"{folder}: {len(bench.items)} items in {len(bench.tasks)} task(s); run with "
          f"`lmms-eval --include_path {args.out} --tasks {group_name(bench)} --log_samples ...`, then "
          f"`hvbench lmms-import --benchmark {args.benchmark} --model NAME --samples <output>/*_samples_*.jsonl`")
    return 0


def _lmms_import_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--video-root", type=Path, default=None, help="as for eval")
    p.add_argument("--model", required=True, help="name the imported run is reported under")
    p.add_argument("--samples", nargs="+", type=Path, required=True,
                   help="lmms-eval sample logs (<output_path>/<model>/*_samples_<task>.jsonl, from --log_samples)")


def _lmms_import(args: argparse.Namespace) -> int:
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.evaluation.lmms import LmmsImportError, import_lmms_samples
    from hvbench_assets.settings_table import open_warehouse

    bench = load_benchmark(args.benchmark, video_root=args.video_root, name=_benchmark_name(args))
    try:
        run_id, n, warnings = import_lmms_samples(open_warehouse(args.warehouse), bench,
                                                  args.samples, args.model)
    except (LmmsImportError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning {w}", file=sys.stderr)
    if not n:
        print(f"error: no sample of {', '.join(map(str, args.samples))} belongs to benchmark {bench.name}; nothing "
              "imported", file=sys.stderr)
        return 2
    print(f"{run_id}: imported {n} replies; `hvbench report --benchmark {bench.name}` includes them")
    return 0


command("lmms-export", "write the benchmark as an lmms-eval task folder (YAML + utils.py, our parsing rules)",
        _lmms_export_args)(_lmms_export)
command("lmms-import", "import lmms-eval sample logs as a run, parsed and scored like hvbench eval",
        _lmms_import_args)(_lmms_import)
command("eval", "evaluate models on a benchmark (resumes by default)", _eval_args)(_run_eval)
command("aggregate", "category averages and the 16-task mean from per-task accuracies (e.g. a paper table)",
        _aggregate_args)(_run_aggregate)
command("report", "per-task, category and overall accuracy, baselines, item statistics", _report_args)(_run_report)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hvbench", description="hvbench: HumanVBench-style benchmark platform")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(p)
        p.set_defaults(_run=run)
    return parser


# -- status ------------------------------------------------------------------------------------
def _status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")


@command("status", "registered inbox files and every inbox entry the sensor passes over, with the reason", _status_args)
def _status(args: argparse.Namespace) -> int:
    from hvbench_assets.settings_table import open_warehouse
    from hvbench_assets.settings_table import status_lines as settings_status_lines
    from hvbench_assets.status import status_lines

    path = args.warehouse or default_warehouse()
    if not warehouse_exists(path):
        print(f"no warehouse at {path} yet: nothing registered (drop videos into the inbox, or run `hvbench demo`)")
    else:
        print("\n".join(status_lines(open_warehouse(path))))
    print("\n".join(settings_status_lines()))
    return 0


# -- runs --------------------------------------------------------------------------------------
def _runs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-dead", action="store_true",
                   help="mark runs whose process is gone (killed `dagster asset materialize`, a dead worker) as failed")


@command("runs", "runs the local instance shows in progress, and whether their process still exists", _runs_args)
def _runs(args: argparse.Namespace) -> int:
    import dagster as dg

    from hvbench_assets.core.settings import PROJECT_ROOT
    from hvbench_assets.runs import fail_dead_runs, in_progress_runs

    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    with dg.DagsterInstance.get() as instance:
        runs = in_progress_runs(instance)
        for r in runs:
            print(f"{r.run_id}  {r.status:9s} {r.job} {r.partition or ''}  {r.why}")
        print(f"{len(runs)} run(s) in progress in {os.environ['DAGSTER_HOME']}")
        if args.fail_dead:
            for r in fail_dead_runs(instance):
                print(f"marked {r.run_id} {'canceled' if r.status == 'CANCELING' else 'failed'}: {r.why}")
    return 0


# -- annotate / questions ------------------------------------------------------------------------
def _annotate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")
    p.add_argument("--annotator", default=os.environ.get("USER", "cli"), help="who annotates (stored with the answer)")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    count = kinds.add_parser("count", help="HC: how many different people the clip shows")
    count.add_argument("clip", help="clip key (videos partition), e.g. talk__000")
    count.add_argument("n", help="a whole number in 1..HVBENCH_MAX_HEAD_COUNT (default 200)")
    count.add_argument("--confirm", action="store_true",
                       help="store a count more than 2x off L2's person estimate (it is refused otherwise)")
    action = kinds.add_parser("action", help="AST/TSA: the red-boxed person's short action and the second it starts")
    action.add_argument("clip")
    action.add_argument("--track", type=int, required=True, help="the target's L1 track id (task_candidates names it)")
    what = action.add_mutually_exclusive_group(required=True)
    what.add_argument("--action", help="a short action like the distractors', e.g. 'begins to wave'")
    what.add_argument("--ongoing", action="store_true", help="the person keeps doing one thing the whole clip")
    what.add_argument("--none", action="store_true", help="no distinct short action")
    action.add_argument("--start", default=None, help="second the action starts (with --action), inside the clip")
    action.add_argument("--end", default=None, help="second the action ends (optional), after --start, inside the clip")


@command("annotate", "record a human answer: a person count (HC) or an action-time pair (AST/TSA)", _annotate_args)
def _annotate(args: argparse.Namespace) -> int:
    from hvbench_assets.core.tasks import annotations
    from hvbench_assets.settings_table import open_warehouse
    from hvbench_assets.review.commands import annotation_limits

    path = args.warehouse or default_warehouse()
    wh = open_warehouse(path)
    try:
        limits = annotation_limits()
        if not annotations.clip_exists(wh, args.clip):
            raise annotations.BadAnnotation(f"clip {args.clip!r} is not in {path} (see `hvbench questions` or the clips table)")
        facts = annotations.clip_facts(wh, args.clip)
        if args.kind == "count":
            value, track = annotations.check_count(args.n, facts, limits, confirmed=args.confirm), None
        else:
            value = annotations.check_action(args.action, args.start, args.end, ongoing=args.ongoing, none=args.none,
                                             facts=facts)
            track = args.track
    except annotations.BadAnnotation as exc:
        hint = " (rerun with --confirm to store it anyway)" if exc.needs_confirmation else ""
        print(f"hvbench annotate: nothing stored: {exc}{hint}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a bad setting
        print(f"hvbench annotate: {exc}", file=sys.stderr)
        return 2
    ann_id = annotations.record(wh, args.clip, args.kind, value, track_id=track, annotator=args.annotator)
    tasks = "human_counting" if args.kind == "count" else "action_at_specified_time, time_of_specific_action"
    print(f"recorded {ann_id} for {args.clip}: {value}\nannotation_sensor rebuilds {tasks} for this clip "
          f"(or materialize them for partition {args.clip} in the UI)")
    return 0


def _questions_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")
    p.add_argument("--task", default=None, help="task name or abbreviation, e.g. ASD")
    p.add_argument("--clip", default=None, help="one clip key")
    p.add_argument("--candidates", action="store_true", help="also list every clip and task verdict (why no question)")


@command("questions", "print generated questions with options, answer and where each fact came from", _questions_args)
def _questions(args: argparse.Namespace) -> int:
    from hvbench_assets.core.tasks.describe import questions_text
    from hvbench_assets.settings_table import open_warehouse

    path = args.warehouse or default_warehouse()
    if not warehouse_exists(path):
        print(f"no warehouse at {path} yet (run `hvbench demo` or the per-clip jobs)")
        return 0
    print(questions_text(open_warehouse(path), task=args.task, clip=args.clip, candidates=args.candidates))
    return 0


# -- explain -----------------------------------------------------------------------------------
def _explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("question_id", help="a questions.question_id (see `hvbench questions`)")
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")
    p.add_argument("--json", action="store_true", help="print the chain as JSON")


@command("explain", "the whole chain of one question: source, labels, rule, model calls, leakage, review, evaluations",
         _explain_args)
def _explain(args: argparse.Namespace) -> int:
    import json

    from hvbench_assets.core.benchmark.explain import explain_question, format_explanation
    from hvbench_assets.settings_table import open_warehouse

    path = args.warehouse or default_warehouse()
    if not warehouse_exists(path):
        print(f"no warehouse at {path} (set HVBENCH_WAREHOUSE or pass --warehouse)", file=sys.stderr)
        return 2
    data = explain_question(open_warehouse(path), args.question_id)
    if not data["found"]:
        print(data["message"], file=sys.stderr)
        return 2
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else format_explanation(data))
    return 0


# -- demo --------------------------------------------------------------------------------------
def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--videos", type=Path, default=None, help="a folder of your own videos instead of generated samples")


@command("demo", "run the main job on sample clips (or --videos DIR) on the local instance and print the result", _demo_args)
def _demo(args: argparse.Namespace) -> int:
    from hvbench_assets.demo import main as demo_main

    return demo_main(["--videos", str(args.videos)] if args.videos else [])


# -- rerank --------------------------------------------------------------------------------------
def _rerank_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)")
    p.add_argument("--weight", action="append", default=[], metavar="MODEL=W",
                   help="an answering model's weight to try (repeat); others keep their stored weight")
    p.add_argument("--task", default=None, help="only this task (ER, ETA, EIC, H2T, BTA, BCA)")


@command("rerank", "synthesis winners under other model weights, from the stored scores (no model calls)", _rerank_args)
def _rerank(args: argparse.Namespace) -> int:
    from hvbench_assets.core.synthesis.rerank import format_rerank, rerank_questions
    from hvbench_assets.settings_table import open_warehouse

    weights = {}
    for item in args.weight:
        name, _, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            print(f"--weight {item!r}: expected MODEL=NUMBER", file=sys.stderr)
            return 2
    path = args.warehouse or default_warehouse()
    if not warehouse_exists(path):
        print(f"no warehouse at {path}", file=sys.stderr)
        return 2
    print(format_rerank(rerank_questions(open_warehouse(path), weights, args.task)))
    return 0


# review, review-token, review-assign, review-stats live in hvbench_assets/review/commands.py
from hvbench_assets.review.commands import REVIEW_COMMANDS  # noqa: E402

for _name, _help, _args, _run in REVIEW_COMMANDS:
    command(_name, _help, _args)(_run)

# warehouse info / copy (DuckDB file <-> DuckLake) live in hvbench_assets/warehouse_commands.py
from hvbench_assets.warehouse_commands import WAREHOUSE_COMMANDS  # noqa: E402

for _name, _help, _args, _run in WAREHOUSE_COMMANDS:
    command(_name, _help, _args)(_run)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args._run(args)
    except BrokenPipeError:  # `hvbench explain … | head`: the reader left; no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
