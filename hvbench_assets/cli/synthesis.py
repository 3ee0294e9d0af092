"""`hvbench rerank`: synthesis winners under other answering-model weights, from the stored scores (no calls)."""

from __future__ import annotations

import argparse
import sys

from hvbench_assets.cli.common import command, existing_warehouse, warehouse_arg


def _rerank_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--weight", action="append", default=[], metavar="MODEL=W",
                   help="an answering model's weight to try (repeat); others keep their stored weight")
    p.add_argument("--task", default=None, help="only this task (ER, ETA, EIC, H2T, BTA, BCA)")


@command("rerank", "synthesis winners under other model weights, from the stored scores (no model calls)", _rerank_args)
def _rerank(args: argparse.Namespace) -> int:
    from hvbench_assets.core.synthesis.rerank import format_rerank, rerank_questions

    weights = {}
    for item in args.weight:
        name, _, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            print(f"--weight {item!r}: expected MODEL=NUMBER", file=sys.stderr)
            return 2
    wh = existing_warehouse(args)
    print(format_rerank(rerank_questions(wh, weights, args.task)))
    return 0
