"""Items as the browser gets them (a question to review, a dispute to settle, a clip to annotate), and the next
one of each queue: the first the reviewer may take that no other reviewer holds (core/curation/leases.py)."""

from __future__ import annotations

from typing import Any

from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.decisions import ADJUDICATE, REVIEW
from hvbench_assets.core.curation.progress import Progress
from hvbench_assets.core.curation.queue import shown_order
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import question_content_hash
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.queues import (State, annotation_items, assigned_for_review, counters, decisions_on,
                                          flag_of, my_disputes, my_queue)

ANNOTATE = "annotate"


def guideline(abbrev: str | None) -> str:
    family = TASK_BY_ABBREV.get(abbrev or "")
    return family.guideline if family else ""


def review_item(q: dict[str, Any], reviewer: str, counts: Progress, s: State) -> dict[str, Any]:
    by = {o["letter"]: o for o in q["options"]}
    chash = s["hashes"].get(q["question_id"]) or question_content_hash(q)
    return {"question_id": q["question_id"], "content_hash": chash, "task": q["task"],
            "abbrev": q["abbrev"], "video_id": q["video_id"], "question": q["question"],
            "options": [{"letter": ltr, "text": by[ltr]["text"]} for ltr in shown_order(q, reviewer, chash)],
            "video": f"/media/{q['question_id']}", "remaining": counts.left, "done": counts.done,
            "guideline": guideline(q["abbrev"]), "flag": flag_of(s, q["question_id"], picked=False)}


def adjudication_item(app: AppState, row: dict[str, Any], s: State, counts: Progress) -> dict[str, Any]:
    qid = row["question_id"]
    q = s["by_id"].get(qid) or app.question_row(qid)  # the state was read in this request: it is current
    chash = s["hashes"].get(qid) or question_content_hash(q)
    votes = {}
    for d in decisions_on(s, qid):
        if d["content_hash"] == chash and d["action"] != ADJUDICATE:
            votes[d["reviewer"]] = {k: d[k] for k in ("action", "blind_choice", "corrected_answer",
                                                      "corrected_text", "reason", "reason_text")}
    return {"question_id": q["question_id"], "content_hash": chash, "task": q["task"], "abbrev": q["abbrev"],
            "video_id": q["video_id"], "question": q["question"], "answer": q["answer"],
            "options": [{"letter": o["letter"], "text": o["text"]} for o in q["options"]],
            "votes": votes, "video": f"/media/{q['question_id']}", "remaining": counts.left,
            "done": counts.done, "guideline": guideline(q["abbrev"])}


def next_review(app: AppState, reviewer: str, skip: set[str]) -> dict[str, Any] | None:
    s = app.load_state()
    queue = [q for q in my_queue(app, s, reviewer) if q["question_id"] not in skip]
    assigned = assigned_for_review(s)  # each assignee must see their question: no lease
    q, _ = leases.take(app.wh, reviewer, REVIEW, queue, lambda q: q["question_id"] not in assigned,
                       app.cfg.lease_minutes)
    return review_item(q, reviewer, counters(app, s, reviewer, False), s) if q else None


def next_adjudication(app: AppState, reviewer: str, skip: set[str]) -> dict[str, Any] | None:
    s = app.load_state()
    rows = [r for r in my_disputes(app, s, reviewer) if r["question_id"] not in skip]
    row, _ = leases.take(app.wh, reviewer, ADJUDICATE, rows, lambda r: True, app.cfg.lease_minutes)
    return adjudication_item(app, row, s, counters(app, s, reviewer, True)) if row is not None else None


def next_annotation(app: AppState, reviewer: str, skip: set[str]) -> dict[str, Any] | None:
    s = app.load_state()
    every = annotation_items(s)
    items = [i for i in every if i["question_id"] not in skip]
    first, remaining = leases.take(app.wh, reviewer, ANNOTATE, items, lambda i: True, app.cfg.lease_minutes)
    if first is None:
        return None
    remaining += sum(i["question_id"] in skip for i in every)  # as the review queue: "left" counts skipped ones
    item = dict(first)
    item.update(video=f"/media/{item['question_id']}", remaining=remaining,
                done=s["memo"](("annotated_by", reviewer),
                               lambda: sum(1 for a in s["annotations"] if a.get("annotator") == reviewer),
                               ("annotations",)),
                guideline=" ".join(dict.fromkeys(guideline(t) for t in item["tasks"])))
    return item


NEXT = {REVIEW: next_review, ADJUDICATE: next_adjudication, ANNOTATE: next_annotation}  # /api/next/{queue}
