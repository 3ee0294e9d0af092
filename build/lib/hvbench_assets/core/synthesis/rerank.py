"""Readings of the stored rankings: how often the winner was each model's own answer (agreement), and what
the descriptive questions' winners would be under other model weights, from the stored `score` steps alone
(no model call). Materializing the six task assets with the new weights in config/models.toml
then applies it: their answer and score calls come from the cache, only a changed option set is perturbed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.synthesis.ranking import rerank_steps
from hvbench_assets.core.warehouse import Warehouse


def agreement_counts(warehouse: Warehouse, task: str) -> tuple[dict[str, int], int]:
    """Across the task's stored rankings: per answering model, how many winners were (also) its own answer,
    and how many rankings there are."""
    rows = warehouse.query("SELECT payload FROM synthesis_steps WHERE task = ? AND step = 'total'", [task])
    won: dict[str, int] = {}
    for r in rows:
        payload = json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"]
        for model, own in (payload.get("agreement") or {}).items():
            won[model] = won.get(model, 0) + int(bool(own))
    return won, len(rows)


def rerank_questions(warehouse: Warehouse, weights: Mapping[str, float], task: str | None = None
                     ) -> list[dict[str, Any]]:
    """Per question with a stored ranking: the stored winner and totals, and the winner and totals with
    `weights` (models left out keep their stored weight)."""
    where, params = "", []
    if task:
        where, params = " AND (task = ? OR abbrev = ?)", [task, task]
    rows = warehouse.query("SELECT video_id, task, abbrev, question_id, step, status, model, weight, payload "
                           f"FROM synthesis_steps WHERE step IN ('score', 'total'){where} ORDER BY video_id, task, seq",
                           params)
    by_question: dict[tuple, list[dict]] = {}
    for r in rows:
        r["payload"] = json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"]
        by_question.setdefault((r["video_id"], r["abbrev"], r["question_id"]), []).append(r)
    out = []
    for (vid, abbrev, qid), steps in by_question.items():
        total = next((s["payload"] for s in steps if s["step"] == "total"), None)
        if total is None:
            continue
        new = rerank_steps(steps, weights)
        texts = [c["text"] for c in total["candidates"]]
        out.append({"video_id": vid, "abbrev": abbrev, "question_id": qid, "stored_winner": texts[total["winner"]],
                    "stored_totals": total["totals"], "winner": texts[new.winner], "totals": new.totals,
                    "weights": new.weights, "changed": new.winner != total["winner"]})
    return out


def format_rerank(rows: list[dict[str, Any]]) -> str:
    lines = []
    for r in rows:
        mark = "CHANGES" if r["changed"] else "same"
        lines.append(f"{r['video_id']} {r['abbrev']} {r['question_id']}: {mark}  weights {r['weights']}\n"
                     f"  stored  {r['stored_totals']} -> {r['stored_winner']!r}\n"
                     f"  new     {r['totals']} -> {r['winner']!r}")
    changed = sum(r["changed"] for r in rows)
    lines.append(f"{len(rows)} question(s) re-ranked from stored scores, {changed} with another winner; no model calls")
    return "\n".join(lines)
