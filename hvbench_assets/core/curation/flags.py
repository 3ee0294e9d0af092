"""Items the evaluation flags go back to the review queue (issue 50 item 5).

Two of the report's flags (core/scoring/report.py, `flagged_items`) send an item back to review:
- negative discrimination: models that do well on the rest of the benchmark get it wrong more often than weak ones
  (a wrong key or an ambiguous item, more often than a hard one);
- every model chose a wrong option while the text-only arm is at chance on it: nobody lands on the key, with the
  video or without it, and the texts do not point at it either; and these models missing it all by luck is
  unlikely (below MISS_CHANCE, from how often each gets the task's other items right), so one or two weak models
  wrong on an item are not taken for a wrong key.
The other flags (non-functional distractors, answer predictable from text, nobody right without a text arm) stay
in flagged_items.csv: they speak of the options, or cannot tell a wrong key from a hard item.

A flag names the question version (content hash) it was raised on and when it was first raised. It is open, and
the question is in every reviewer's queue (after their assigned questions, one reviewer at a time), until anyone
decides on that version after the flag. That decision is an ordinary review decision and counts as state.py says:
a rejection or correction reaches the next export through reviewed_questions like any other. A question
regenerated since has another hash, so the flag no longer applies (the new version is unreviewed anyway).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hvbench_assets.core.curation.tables import REVIEW_FLAGS
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse

NEGATIVE_DISCRIMINATION = "negative discrimination"
WRONG_BY_ALL = "every model wrong, text arm at chance"
FOR_REVIEW = (NEGATIVE_DISCRIMINATION, WRONG_BY_ALL)


def for_review(reasons: Iterable[str]) -> list[str]:
    """The reasons of a flagged item that send it back to review (in FOR_REVIEW order)."""
    have = set(reasons)
    return [r for r in FOR_REVIEW if r in have]


def text_arm_at_chance(votes: tuple[int, int] | None, n_options: int) -> bool:
    """`votes`: (models right, models asked) of the text-only arm on the item. At chance: no better than a uniform
    guess (right share <= 1 / options). Without the text arm nothing is known, so False."""
    return bool(votes and votes[1] and n_options and votes[0] / votes[1] <= 1 / n_options)


MISS_CHANCE = 0.05  # the chance that every model misses a sound item, below which "all wrong" points at the key


def chance_all_miss(records: Iterable[tuple[int, int, int, int]]) -> float:
    """How likely every model misses an item whose key is right, each missing independently at its own rate.
    `records`: per model (right, asked) on the task's other items and (right, asked) on every other item. A model's
    rate on the task is shrunk toward its overall rate (weight of 2 items), that toward 1/2 (Laplace), so a task
    with few other items leans on the model's accuracy elsewhere."""
    p = 1.0
    for task_right, task_asked, all_right, all_asked in records:
        overall = (all_right + 1) / (all_asked + 2)
        p *= 1 - (task_right + 2 * overall) / (task_asked + 2)
    return p


def _is_after(when: Any, since: Any) -> bool:
    return when is not None and since is not None and when >= since


def flag_outcome(flag: Mapping[str, Any], decisions: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first decision on the flagged version made after the flag (it closes the flag), or None: still open."""
    after = [d for d in decisions if d["question_id"] == flag["question_id"]
             and d["content_hash"] == flag["content_hash"] and _is_after(d["created_at"], flag["flagged_at"])]
    return min(after, key=lambda d: (d["created_at"], d["decision_id"])) if after else None


def open_flags(flags: Iterable[Mapping[str, Any]], decisions: Sequence[Mapping[str, Any]],
               hashes: Mapping[str, str]) -> dict[str, list[Mapping[str, Any]]]:
    """question_id -> its open flags (several benchmarks may flag one question): flags the latest report raised on
    the question's current version that no decision followed yet."""
    by_q: dict[str, list[Mapping[str, Any]]] = {}
    for d in decisions:
        by_q.setdefault(d["question_id"], []).append(d)
    out: dict[str, list[Mapping[str, Any]]] = {}
    for f in flags:
        qid = f["question_id"]
        if f.get("current") and hashes.get(qid) == f["content_hash"] and flag_outcome(f, by_q.get(qid, ())) is None:
            out.setdefault(qid, []).append(f)
    return out


def shown_flag(flags: Sequence[Mapping[str, Any]], picked: bool) -> dict[str, Any]:
    """What the review page shows of a question's open flags: before the blind pick the reasons and figures (they
    do not give the answer away); once the reviewer has picked (`picked`), the models' answers too."""
    out: dict[str, Any] = {
        "reasons": sorted({r for f in flags for r in f["reasons"] or []}, key=FOR_REVIEW.index),
        "detail": "; ".join(f"{f['benchmark']}: {f['detail']}" for f in flags if f.get("detail"))}
    if picked:
        out["answers"] = [{"benchmark": f["benchmark"], **a} for f in flags for a in f["answers"] or []]
    return out


def same_version(evaluated_options: Iterable[str], question: Mapping[str, Any],
                 reviewed: Mapping[str, Any] | None) -> bool:
    """Whether the options a benchmark asked are those of the question now (as stored, or after a correction):
    a flag raised on an older export must not land on a regenerated question."""
    asked = sorted(str(t) for t in evaluated_options)
    versions = [question.get("options") or []] + ([reviewed.get("options") or []] if reviewed else [])
    return any(sorted(str(o.get("text")) for o in opts) == asked for opts in versions)


def write_flags(warehouse: Warehouse, benchmark: str, candidates: Sequence[Mapping[str, Any]],
                now: dt.datetime | None = None) -> dict[str, list[str]]:
    """Write `benchmark`'s flags from its latest report: `candidates` (task, question_id, reasons, detail, answers,
    options: the option texts as evaluated) that have review reasons. A flag already raised on the same version
    keeps its time, so a report built again does not reopen what a reviewer has looked at; a flag the report no
    longer raises stays as history (`current` false, never open). Returns question ids by outcome: `sent` (of
    them `new`), `not_ours` (no warehouse question: a published benchmark) and `changed` (the question was
    regenerated since the export)."""
    from hvbench_assets.core.curation.store import _table_rows
    from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS

    now = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    wanted = [c for c in candidates if for_review(c["reasons"])]
    questions = {q["question_id"]: q for q in warehouse.rows(QUESTIONS)} \
        if wanted and warehouse.has_table(QUESTIONS.name) else {}
    reviewed = {r["question_id"]: r for r in warehouse.rows(REVIEWED_QUESTIONS)} \
        if wanted and warehouse.has_table(REVIEWED_QUESTIONS.name) else {}
    out: dict[str, list[str]] = {"sent": [], "new": [], "not_ours": [], "changed": []}
    rows = []
    for c in wanted:
        qid = str(c["question_id"])
        q = questions.get(qid)
        if q is None:
            out["not_ours"].append(qid)
        elif not same_version(c.get("options") or [], q, reviewed.get(qid)):
            out["changed"].append(qid)
        else:
            rows.append({"benchmark": benchmark, "question_id": qid, "task": c["task"],
                         "content_hash": question_content_hash(q), "reasons": for_review(c["reasons"]),
                         "detail": c.get("detail"), "answers": list(c.get("answers") or []), "current": True})

    def build(con):
        before = {(f["question_id"], f["content_hash"]): f for f in _table_rows(con, REVIEW_FLAGS)
                  if f["benchmark"] == benchmark}
        for r in rows:
            r["flagged_at"] = (before.pop((r["question_id"], r["content_hash"]), None) or {}).get("flagged_at") or now
        history = [{**f, "current": False} for f in before.values()]
        # every row gets this write's time: readers that follow the table by its newest stamp (live.py) see them all
        return [(REVIEW_FLAGS, {"benchmark": benchmark}, [{**r, "written_at": now} for r in rows + history], None)]

    warehouse.read_then_replace([REVIEW_FLAGS], build)
    out["sent"] = [r["question_id"] for r in rows]
    out["new"] = [r["question_id"] for r in rows if r["flagged_at"] == now]
    return out
