"""Agreement between two reviewers (Cohen's kappa, computed as scikit-learn's `cohen_kappa_score` does) and
reviewer accuracy on their blind choices (a human baseline for the evaluation report).

Only each reviewer's latest review decision on a question's *current* version counts. Kappa is computed
per task and reviewer pair over the items both reviewed: `on="blind"` compares the options they picked
before seeing the proposed answer (the paper's agreement study answers the questions independently),
`on="verdict"` compares their final verdicts (reject, or the answer they kept)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from hvbench_assets.core.curation.state import is_question, verdict_of
from hvbench_assets.core.tasks.store import question_content_hash

ALL_TASKS = "all"


def latest_reviews(questions: Iterable[Mapping[str, Any]], decisions: Iterable[Mapping[str, Any]],
                   hashes: Mapping[str, str] | None = None,
                   by_id: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Mapping[str, Any]]]:
    """question_id -> reviewer -> latest accept/correct/reject on the question's current content. `hashes`
    (question_id -> content hash) and `by_id` (question_id -> question): when the caller keeps them."""
    decisions = list(decisions)
    by_id = by_id if by_id is not None else {q["question_id"]: q for q in questions}
    current = {}
    for qid in {d["question_id"] for d in decisions}:  # only decided questions need their hash
        q = by_id.get(qid)
        if q is not None and is_question(q):
            current[qid] = (hashes[qid] if hashes is not None else question_content_hash(dict(q)), q)
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for d in sorted(decisions, key=lambda d: (str(d.get("created_at") or ""), d["decision_id"])):
        cur = current.get(d["question_id"])
        if d["action"] == "adjudicate" or cur is None or d["content_hash"] != cur[0]:
            continue
        out.setdefault(d["question_id"], {})[d["reviewer"]] = d
    return out


def _label(d: Mapping[str, Any], question: Mapping[str, Any], on: str) -> str | None:
    if on == "blind":
        return d.get("blind_choice")
    v = verdict_of(d, question.get("answer"))
    return "|".join(str(x) for x in v.agreement_key)


def cohen_kappa(xs: list[str], ys: list[str]) -> float | None:
    """Cohen's kappa of two raters' labels, by scikit-learn's formula (1 - observed / expected disagreement over
    the confusion matrix), in numpy: importing scikit-learn and validating its inputs took about half of the stats
    page at 20,000 questions. None when it is undefined (one label only, or no items)."""
    labels = sorted(set(xs) | set(ys))
    if len(labels) < 2 or len(xs) != len(ys):
        return None
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    pairs = np.fromiter((index[x] * k + index[y] for x, y in zip(xs, ys)), dtype=np.int64, count=len(xs))
    confusion = np.bincount(pairs, minlength=k * k).reshape(k, k).astype(np.float64)
    sum0, sum1 = confusion.sum(axis=0), confusion.sum(axis=1)  # the same operations in the same order
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    off = 1.0 - np.eye(k)
    disagreement = np.sum(off * expected)
    if disagreement == 0:
        return None
    kappa = float(1 - np.sum(off * confusion) / disagreement)
    return None if math.isnan(kappa) else kappa


def kappa_table(questions: list[Mapping[str, Any]], decisions: list[Mapping[str, Any]],
                on: str = "blind", hashes: Mapping[str, str] | None = None,
                by_id: Mapping[str, Mapping[str, Any]] | None = None,
                reviews: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Rows per task (and task "all", pooled) and reviewer pair: task, abbrev, reviewer_a, reviewer_b, items, agreement (share of equal labels), kappa, labels_a,
    labels_b (the exact inputs of the kappa). kappa is None when it is undefined (one label only).
    `hashes`, `by_id`, `reviews` (latest_reviews' result): when the caller has them already."""
    if on not in ("blind", "verdict"):
        raise ValueError(f"kappa on {on!r}: blind | verdict")
    by_id = by_id if by_id is not None else {q["question_id"]: q for q in questions}
    pairs: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {}
    abbrevs: dict[str, str] = {}
    reviews = reviews if reviews is not None else latest_reviews(questions, decisions, hashes, by_id)
    for qid, per in reviews.items():
        q = by_id[qid]
        abbrevs.setdefault(q["task"], q["abbrev"])
        for a, b in itertools.combinations(sorted(per), 2):
            la, lb = _label(per[a], q, on), _label(per[b], q, on)
            if la is None or lb is None:
                continue  # a skipped blind choice is no rating
            for task in (q["task"], ALL_TASKS):  # per task, and pooled like the paper's single agreement figure
                xs, ys = pairs.setdefault((task, a, b), ([], []))
                xs.append(la)
                ys.append(lb)
    rows = []
    for (task, a, b), (xs, ys) in sorted(pairs.items(), key=lambda kv: (kv[0][0] == ALL_TASKS, kv[0])):
        kappa = cohen_kappa(xs, ys)
        rows.append({"task": task, "abbrev": abbrevs.get(task) or task, "reviewer_a": a, "reviewer_b": b, "items": len(xs),
                     "agreement": sum(x == y for x, y in zip(xs, ys)) / len(xs), "kappa": kappa,
                     "labels_a": xs, "labels_b": ys, "on": on})
    return rows


def reviewer_accuracy(questions: list[Mapping[str, Any]], decisions: list[Mapping[str, Any]],
                      reviewed: Iterable[Mapping[str, Any]], hashes: Mapping[str, str] | None = None,
                      by_id: Mapping[str, Mapping[str, Any]] | None = None,
                      reviews: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Per reviewer and task: how often the blind choice was the final answer. Counted only where the final
    answer is one of the options the reviewer saw (accepted, or corrected to another option; not rejected,
    disputed, unreviewed, or rewritten as a new text)."""
    final = {}
    for r in reviewed:
        if r["state"] not in ("accepted", "corrected"):
            continue
        opt = next((o for o in r["options"] or [] if o.get("letter") == r["answer"]), None)
        if opt is not None and opt.get("origin") != "review":
            final[r["question_id"]] = r["answer"]
    by_id = by_id if by_id is not None else {q["question_id"]: q for q in questions}
    counts: dict[tuple[str, str], list[int]] = {}
    abbrevs: dict[str, str] = {}
    reviews = reviews if reviews is not None else latest_reviews(questions, decisions, hashes, by_id)
    for qid, per in reviews.items():
        if qid not in final:
            continue
        abbrevs.setdefault(by_id[qid]["task"], by_id[qid]["abbrev"])
        for reviewer, d in per.items():
            if d.get("blind_choice") is None:
                continue
            c = counts.setdefault((reviewer, by_id[qid]["task"]), [0, 0])
            c[0] += 1
            c[1] += int(d["blind_choice"] == final[qid])
    return [{"reviewer": rv, "task": task, "abbrev": abbrevs.get(task), "items": n, "correct": k,
             "accuracy": k / n} for (rv, task), (n, k) in sorted(counts.items())]


def human_baseline(accuracy_rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """task -> accuracy of all reviewers' blind choices pooled (the report's `human` mapping)."""
    pooled: dict[str, list[int]] = {}
    for r in accuracy_rows:
        c = pooled.setdefault(r["task"], [0, 0])
        c[0] += r["items"]
        c[1] += r["correct"]
    return {task: k / n for task, (n, k) in pooled.items() if n}
