"""The `synthesis_steps` table: every intermediate of a descriptive question is a row, in order.

step: caption | question | answer | score | total | perturbation | check, then (written by the leakage step,
core/benchmark/repair.py) blind | repair | repair_check for every round of repairing a blind-answered question,
each payload naming its `benchmark` and `round`. `call_id` points at the
`model_calls` row (null for steps computed here: totals, checks, a caption read from labels); `weight` is
the scoring model's vote weight on `score` rows. Recomputing a question's winner from these rows alone:
`ranking.rerank_steps(rows)`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.warehouse import TableSpec

SYNTHESIS_STEPS = TableSpec(
    "synthesis_steps",
    (
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("abbrev", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("seq", "INTEGER"),  # order within the question's chain
        ("step", "VARCHAR"),
        ("attempt", "INTEGER"),  # 1, or 2 for the one retry of a caption / perturbation
        ("model", "VARCHAR"),  # registry name of the model that answered (null: computed here)
        ("weight", "DOUBLE"),  # score rows: the model's vote weight
        ("call_id", "VARCHAR"),  # model_calls.id
        ("cached", "BOOLEAN"),  # the call was answered from the cache
        ("status", "VARCHAR"),  # ok | failed | rejected
        ("payload", "JSON"),
        ("code_version", "VARCHAR"),
        ("materialized_at", "TIMESTAMP"),
    ),
    key=("video_id", "task"),
    provenance=False,  # its own `model` column names the answering model
    description="Every synthesis intermediate (caption, question, answers, scores, totals, perturbations, checks)",
)

STEP_NAMES = ("caption", "question", "answer", "score", "total", "perturbation", "check")
REPAIR_STEPS = ("blind", "repair", "repair_check")  # appended after the chain by the leakage step's repair rounds


@dataclass
class StepLog:
    """Steps of one question as they happen; `rows()` turns them into synthesis_steps rows."""

    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, step: str, payload: dict[str, Any], status: str = "ok", call=None, model: str | None = None,
            weight: float | None = None, attempt: int = 1, origin: dict[str, Any] | None = None) -> None:
        """`call`: the ChatResult of this step; `origin`: an earlier step whose call produced this one's text."""
        assert step in STEP_NAMES, step
        src = origin or {"call_id": getattr(call, "call_id", None), "cached": getattr(call, "cached", None)}
        self.steps.append({
            "step": step, "attempt": attempt, "status": status, "payload": payload,
            "model": model or (getattr(call, "model", None) if call is not None else None), "weight": weight,
            "call_id": src["call_id"], "cached": src["cached"],
        })

    def last_call(self, *steps: str) -> dict[str, Any] | None:
        """The latest successful step of these kinds that made a call."""
        return next((s for s in reversed(self.steps) if s["step"] in steps and s["call_id"] and s["status"] == "ok"),
                    None)

    @property
    def call_ids(self) -> list[str]:
        return list(dict.fromkeys(s["call_id"] for s in self.steps if s["call_id"]))


def step_rows(steps: list[dict[str, Any]], video_id: str, task: str, abbrev: str, question_id: str | None,
              code_version: str) -> list[dict[str, Any]]:
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return [{**s, "video_id": video_id, "task": task, "abbrev": abbrev, "question_id": question_id, "seq": i,
             "code_version": code_version, "materialized_at": now} for i, s in enumerate(steps)]
