"""Weighted preference voting over candidate answers.

Every answering model scores every candidate (0-10); a candidate's total is the sum of score x the
model's weight. The top total is the provisional truth, the rest (in order) are distractor seeds. Ties
go to the earlier candidate (the question step's answer first, then the answerers in registry order).
`rerank_steps` recomputes all of it from stored `score` steps with other weights, without a call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hvbench_assets.core.synthesis.replies import BadReply, json_object

MAX_SCORE = 10.0


def parse_scores(text: str | None, n: int) -> dict[int, float]:
    """{"scores": {"1": 7, "2": 3, ...}} (or a list of n numbers in candidate order, or of {answer, score})
    with every candidate 1..n scored 0..10; anything else is BadReply."""
    obj = json_object(text)
    raw = obj.get("scores")
    if isinstance(raw, list) and raw and all(isinstance(x, dict) for x in raw):  # [{"answer": 1, "score": 7}, ...]
        raw = {str(x.get("answer")): x.get("score") for x in raw}
    elif isinstance(raw, list):  # [7, 3, ...] in candidate order
        raw = {str(i): v for i, v in enumerate(raw, 1)}
    if not isinstance(raw, dict):
        raise BadReply("reply has no 'scores' object")
    scores: dict[int, float] = {}
    for key, value in raw.items():
        try:
            idx = int(str(key).strip().removeprefix("answer").strip())
        except ValueError:
            raise BadReply(f"score key {key!r} is not an answer number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadReply(f"score of answer {key} is not a number: {value!r}")
        if not 0 <= value <= MAX_SCORE:
            raise BadReply(f"score of answer {key} is {value}, outside 0..{MAX_SCORE:g}")
        scores[idx] = float(value)
    if sorted(scores) != list(range(1, n + 1)):
        raise BadReply(f"scores given for answers {sorted(scores)}, expected 1..{n}")
    return scores


@dataclass(frozen=True)
class Ranking:
    totals: list[float]  # per candidate (0-based), weighted
    order: list[int]  # candidate indexes, best first
    weights: dict[str, float]  # the weights used, per scoring model

    @property
    def winner(self) -> int:
        return self.order[0]

    def as_dict(self) -> dict:
        return {"totals": self.totals, "order": self.order, "winner": self.winner, "weights": self.weights}


def rank(scores: Mapping[str, Mapping[int, float]], weights: Mapping[str, float], n: int) -> Ranking:
    """`scores[model][candidate 1..n]`; models without a weight count 1."""
    totals = [0.0] * n
    used = {}
    for model, per in scores.items():
        w = float(weights.get(model, 1.0))
        used[model] = w
        for idx, s in per.items():
            totals[int(idx) - 1] += w * float(s)
    totals = [round(t, 6) for t in totals]
    order = sorted(range(n), key=lambda i: (-totals[i], i))
    return Ranking(totals, order, used)


def rerank_steps(steps: Iterable[Mapping], weights: Mapping[str, float] | None = None) -> Ranking:
    """The ranking of one question from its stored `score` steps (rows of synthesis_steps). `weights`
    overrides the stored ones per model (a model left out keeps its stored weight)."""
    scores, stored, n = {}, {}, 0
    for row in steps:
        if row["step"] != "score" or row.get("status") != "ok":
            continue
        payload = row["payload"] if isinstance(row["payload"], dict) else json.loads(row["payload"])
        scores[row["model"]] = {int(k): float(v) for k, v in payload["scores"].items()}
        stored[row["model"]] = float(row["weight"] if row.get("weight") is not None else 1.0)
        n = max(n, len(payload["scores"]))
    return rank(scores, {**stored, **(weights or {})}, n)


def agreement(winner_sources: Sequence[str], answerers: Sequence[str]) -> dict[str, bool]:
    """Per answering model: was the winning candidate (also) its own answer?"""
    return {m: m in winner_sources for m in answerers}
