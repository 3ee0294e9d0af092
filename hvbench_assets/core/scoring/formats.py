"""The formats of one export side by side: per model, right / asked per task under multiple choice, yes/no and
open-ended (the folders `benchmark_export` writes beside each other, core/benchmark/formats.py). Full arm, the
published option order, each model's first run: the same rows the leaderboard and the consistency scores read.

    tables = format_tables({"mc": rows, "yesno": yesno_rows, "open": open_rows})   # model -> Table
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from hvbench_assets.core.benchmark.formats import FORMAT_NAMES, MC
from hvbench_assets.core.scoring.consistency import first_runs
from hvbench_assets.core.scoring.metrics import task_scores
from hvbench_assets.core.scoring.report import Table, _abbrev

NOTE = ("Right / asked per task, full arm, each model's first run. Yes/no: two statements per item, 'yes' right for "
        "half of each task, so answering one word always scores 50 %. Open-ended: graded by the matcher where the "
        "truth is structured, else by the judge, else counted wrong (see the open-ended report for their agreement).")


def _cell(found) -> str:
    right, asked = sum(s.n_correct for s in found), sum(s.n_items for s in found)
    return f"{right}/{asked} ({100 * right / asked:.0f} %)" if asked else "-"


def format_tables(by_format: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Table]:
    """model -> its table (task rows and an "all" row; a column per format it answered), for every model that
    answered multiple choice and at least one other format; empty when none did."""
    full = {fmt: first_runs(r for r in rows if r.get("arm", "full") == "full") for fmt, rows in by_format.items()}
    out = {}
    for model in sorted(full.get(MC) or {}):
        formats = [f for f in full if model in full[f]]
        if len(formats) < 2:
            continue
        scores = {f: task_scores(full[f][model]) for f in formats}
        tasks = sorted({t for s in scores.values() for t in s}, key=_abbrev)
        rows = [[_abbrev(t), *(_cell([scores[f][t]] if t in scores[f] else []) for f in formats)] for t in tasks]
        rows.append(["all", *(_cell(list(scores[f].values())) for f in formats)])
        out[model] = Table(["task", *(FORMAT_NAMES[f] for f in formats)], rows)
    return out


def markdown_section(tables: Mapping[str, Table]) -> str:
    parts = ["## Formats", "", NOTE, ""]
    for model, table in tables.items():
        parts += [f"**{model}**", "", table.markdown(), ""]
    return "\n".join(parts)


def html_section(tables: Mapping[str, Table]) -> str:
    return (f"<h2>Formats</h2><p>{escape(NOTE)}</p>"
            + "".join(f"<h3>{escape(model)}</h3>{table.html()}" for model, table in tables.items()))
