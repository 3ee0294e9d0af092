"""`hvbench` command line. Each command registers itself in COMMANDS (name -> (help, add_arguments, run), see
common.py), one module per group, so other stages add theirs the same way without touching the dispatcher.

    evaluation.py  hvbench eval --benchmark DIR --model NAME [--frames 8 | --fps 1] [--concurrency 4] [--limit N]
                   (eval and lmms-export take --format yesno: the benchmark's yes/no statements, DIR_yesno)
                   hvbench report --benchmark DIR [--human baseline.csv] [--out DIR]
                   hvbench lmms-export --benchmark DIR --out DIR / lmms-import --benchmark DIR --model M --samples F...
                   hvbench aggregate scores.csv        (per-task numbers in, category averages and overall out)
    questions.py   hvbench annotate count|action / questions / explain QUESTION_ID [--json]
    review.py      hvbench review / review-token / review-assign / review-stats
    status.py      hvbench status                      (registered inbox files; what the inbox sensor passes over)
    runs.py        hvbench runs [--fail-dead]          (runs left in progress by a killed process; mark them failed)
                   hvbench runs --file FILE            (the Runs page filter listing every run touching FILE, and those runs)
    warehouse.py   hvbench warehouse info|copy         (backends, tables; DuckDB file <-> DuckLake)
    demo.py        hvbench demo [--videos DIR]         (the main job on sample clips, printed)
    synthesis.py   hvbench rerank --weight MODEL=W     (synthesis winners under other weights, from stored scores)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

# they register their commands; the order of the imports is the order of `hvbench --help`
from hvbench_assets.cli import evaluation, status, runs, questions, demo, synthesis, review, warehouse  # noqa: F401
from hvbench_assets.cli.common import COMMANDS, CommandExit

__all__ = ["COMMANDS", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hvbench", description="hvbench: HumanVBench-style benchmark platform")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(p)
        p.set_defaults(_run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args._run(args)
    except CommandExit as stop:
        return stop.code
    except BrokenPipeError:  # `hvbench explain … | head`: the reader left; no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
