"""Grading one reply to an open-ended item: the deterministic matcher, and the judge when one is configured.

The judge grades every reply, not only those the matcher cannot: where both grade, the report measures their
agreement (core/scoring/open_report.py); the item's grade is the matcher's where it has one, else the judge's, else
ungradable (counted wrong, like an unparsed reply).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from hvbench_assets.core.benchmark.layout import BenchmarkItem
from hvbench_assets.core.benchmark.open_ended import truth_of
from hvbench_assets.core.evaluation.prompt import as_extraction, match_open
from hvbench_assets.core.scoring.open_judge import judge_open
from hvbench_assets.core.scoring.open_match import RIGHT, UNGRADABLE


def grade_open(item: BenchmarkItem, text: str, answerer: Any, judge_model: str | None,
               slot: AbstractContextManager | None = None) -> dict[str, Any]:
    """The eval_responses fields of a reply to `item`: status, method (match | judge | ungradable), chosen (the
    answer letter when right), correct, grade, grade_reason, judge_verdict, judge_response."""
    matched = match_open(item, text)
    judged, judge_text = None, None
    if judge_model and text.strip():
        with slot or nullcontext():
            judged, result = judge_open(answerer, judge_model, item.question, truth_of(item)[2], text)
        judge_text = getattr(result, "text", None)
    if matched.verdict != UNGRADABLE:
        final, method = matched, "match"
    elif judged is not None and judged.verdict != UNGRADABLE:
        final, method = judged, "judge"
    else:
        final, method = matched, "ungradable"
    verdict = as_extraction(item, final, method)
    return {"status": verdict.status, "method": method, "chosen": verdict.letter, "chosen_original": verdict.letter,
            "correct": final.verdict == RIGHT, "grade": matched.verdict, "grade_reason": matched.reason,
            "judge_verdict": judged.verdict if judged else None, "judge_response": judge_text}
