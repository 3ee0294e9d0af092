"""`hvbench eval`, `report`, `aggregate`, `lmms-export` and `lmms-import`: evaluating models on a benchmark
and reporting their scores (the work is in core/evaluation and core/scoring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hvbench_assets.cli.common import command, warehouse_arg, warehouse_path
from hvbench_assets.settings_table import data_dir


def _common(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--benchmark", required=True,
                   help="benchmark folder (one JSONL per task) or, for report, a benchmark name already evaluated")
    p.add_argument("--name", default=None, help="benchmark name in the warehouse (default: the folder name)")


def _benchmark_name(args) -> str:
    return args.name or Path(args.benchmark).resolve().name


def _format_arg(p: argparse.ArgumentParser, every: bool = False) -> None:
    p.add_argument("--format", choices=("mc", "yesno", "open") + (("all",) if every else ()), default="mc",
                   help="yesno: first write the benchmark's yes/no statements (two per item, 'yes' right for half of "
                        "each task) to <benchmark>_yesno beside it, and use that; open: the same with the items asked "
                        "without options, graded against the right option (<benchmark>_open)"
                        + ("; all: the three in turn, and with --report the multiple-choice report shows them side by "
                           "side" if every else "") + " (default: mc, the items as they are)")


def _load(args):
    """The benchmark of --benchmark, or with --format yesno|open its derived export (written first); None after an
    error."""
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.benchmark.export import ExportError
    from hvbench_assets.core.benchmark.formats import write_derived

    bench = load_benchmark(args.benchmark, video_root=args.video_root, name=_benchmark_name(args))
    fmt = getattr(args, "format", "mc")
    if fmt == "mc" or not bench.items or bench.video_problem:
        return bench
    try:
        folder, result = write_derived(bench, fmt)
    except (ExportError, OSError) as exc:
        print(f"error: cannot write the {fmt} export beside {args.benchmark}: {exc}", file=sys.stderr)
        return None
    if fmt == "yesno":
        counts = result.manifest["balance"]
        print(f"{folder}: {len(result.items)} yes/no statements from {len(bench.items)} items; 'yes' right in "
              + ", ".join(f"{t} {c['yes']}/{c['yes'] + c['no']}" for t, c in counts.items()), file=sys.stderr)
    else:
        kinds = result.manifest["answer_kinds"]
        graded = sum(n for per in kinds.values() for k, n in per.items() if k != "text")
        print(f"{folder}: {len(result.items)} open items, {graded} with a structured truth the matcher grades, "
              f"the others by the judge only", file=sys.stderr)
        if hasattr(args, "judge") and not args.judge and graded < len(result.items):
            print(f"note: no --judge: the {len(result.items) - graded} items with a free-text reference will count as "
                  "ungradable (wrong)", file=sys.stderr)
    for left in result.left_out:
        print(f"warning {left['question_id']}: left out of the {fmt} export ({left['reason']})", file=sys.stderr)
    return load_benchmark(folder, name=f"{bench.name}_{fmt}" if args.name else None)


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
    p.add_argument("--judge", default=None, help="model that maps unparsable replies to a letter; with --format open it grades "
                                                  "replies against the reference (optional)")
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--repeats", type=int, default=1,
                   help="runs per model with request seeds 0..N-1; the report shows their mean and spread")
    p.add_argument("--models-file", default=None, help="model registry (default: HVBENCH_MODELS_FILE, else config/models.toml)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--report", action="store_true", help="write the benchmark report afterwards")
    _format_arg(p, every=True)


def _run_eval(args: argparse.Namespace) -> int:
    from hvbench_assets.core.evaluation import mllm_answerer
    from hvbench_assets.settings_table import model_registry, value
    from hvbench_assets.core.mllm import ModelNotConfigured
    from hvbench_assets.settings_table import open_warehouse

    warehouse = open_warehouse(warehouse_path(args))
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
    code = 0
    # "all": the derived formats first, so the multiple-choice report, written last, has them to show
    for fmt in ("yesno", "open", "mc") if args.format == "all" else (args.format,):
        if args.format == "all":
            print(f"== {fmt}", file=sys.stderr)
        code = max(code, _eval_models(argparse.Namespace(**{**vars(args), "format": fmt}), answerer, warehouse, models))
    warm.join()  # never leave the process while it holds the warehouse
    return code


def _eval_models(args: argparse.Namespace, answerer, warehouse, models: list[str]) -> int:
    from hvbench_assets.core.evaluation import EvalConfig, ModelMisconfigured, evaluate
    from hvbench_assets.core.evaluation.arms import ArmUnavailable, parse_arms
    from hvbench_assets.core.mllm import ModelNotConfigured

    try:
        arms = parse_arms(args.arms)
    except ValueError as exc:
        print(f"error: --arms: {exc}", file=sys.stderr)
        return 2
    bench = _load(args)
    if bench is None:
        return 2
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
    from hvbench_assets.settings_table import model_display_names

    if name not in benchmark_names(warehouse):
        known = ", ".join(benchmark_names(warehouse)) or "none"
        print(f"no evaluation runs for benchmark {name!r} in {warehouse.path} (known: {known})", file=sys.stderr)
        return 2
    human = load_baseline_file(human_file) if human_file else None
    extra = {} if item_max_unparsed is None else {"item_max_unparsed": item_max_unparsed}
    if stats is not None:
        extra["stats"] = stats
    data, paths = report_for(warehouse, name, human=human, run_ids=run_ids,
                             out_dir=out or data_dir() / "reports" / name, model_names=model_display_names(), **extra)
    if print_md:
        print(render_markdown(data))
    for kind, path in paths.items():
        print(f"{kind}: {path}", file=sys.stderr)
    sent = data.sent_to_review
    if sent.get("sent"):
        print(f"review queue: {len(sent['sent'])} flagged item(s) ({len(sent['new'])} new), see `hvbench review`",
              file=sys.stderr)
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from hvbench_assets.settings_table import open_warehouse

    warehouse = open_warehouse(warehouse_path(args))
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
    from hvbench_assets.core.tasks.catalog import TASKS
    from hvbench_assets.core.tasks.family import CATEGORIES
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
    _format_arg(p)


def _lmms_export(args: argparse.Namespace) -> int:
    from hvbench_assets.core.evaluation.lmms import export_lmms_task, group_name

    bench = _load(args)
    if bench is None:
        return 2
    for issue in bench.issues:
        print(f"skipped {issue}", file=sys.stderr)
    if not bench.items:
        print(f"no items in {args.benchmark}", file=sys.stderr)
        return 2
    folder = export_lmms_task(bench, args.out)
    print(f"{folder}: {len(bench.items)} items in {len(bench.tasks)} task(s); run with "
          f"`lmms-eval --include_path {args.out} --tasks {group_name(bench)} --log_samples ...`, then "
          f"`hvbench lmms-import --benchmark {bench.root} --model NAME --samples <output>/*_samples_*.jsonl`")
    return 0


def _lmms_import_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--video-root", type=Path, default=None, help="as for eval")
    p.add_argument("--model", required=True, help="name the imported run is reported under")
    p.add_argument("--samples", nargs="+", type=Path, required=True,
                   help="lmms-eval sample logs (<output_path>/<model>/*_samples_<task>.jsonl, from --log_samples)")


def _lmms_import(args: argparse.Namespace) -> int:
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.evaluation.lmms_samples import LmmsImportError, import_lmms_samples
    from hvbench_assets.settings_table import open_warehouse

    bench = load_benchmark(args.benchmark, video_root=args.video_root, name=_benchmark_name(args))
    try:
        run_id, n, warnings = import_lmms_samples(open_warehouse(warehouse_path(args)), bench,
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
