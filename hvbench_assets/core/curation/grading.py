"""The grade queue: people grade open-ended replies, so the report can say how often the judge (and the matcher)
agree with a human on the same replies (issue 50 item 2).

A grader sees what the judge sees (core/scoring/open_judge.py): the question, the reference answer and the reply,
not the video, the model, the matcher's grade or the judge's verdict, and gives one of the judge's verdicts: right,
wrong, or cannot tell (`ungradable`, left out of the agreement, as the judge's undecided replies are). Replies come
in a fixed pseudo-random order (by their id's hash), so however many are graded they are a random sample of the
replies, not the first task's. A reply graded by anyone leaves the queue; a reply asked again (other text) comes
back. Grades are appended; each grader's latest on a reply counts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from hvbench_assets.core.curation.tables import HUMAN_GRADES
from hvbench_assets.core.scoring.open_match import RIGHT, UNGRADABLE, WRONG, is_open_reply
from hvbench_assets.core.warehouse import Warehouse

VERDICTS = (RIGHT, WRONG, UNGRADABLE)  # the judge rubric's: RIGHT, WRONG, or undecided
KEYS = {"1": RIGHT, "2": WRONG, "0": UNGRADABLE}  # the grade page's keys (facts for the page and the docs)
ReplyKey = tuple[str, str, str]  # (run_id, task, question_id)


class BadGrade(ValueError):
    pass


def _sha(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def reply_id(run_id: str, task: str, question_id: str) -> str:
    return "r" + _sha(run_id, task, str(question_id))[:15]


def reply_sha(text: str | None) -> str:
    return _sha(text or "")[:16]


def key_of(row: Mapping[str, Any]) -> ReplyKey:
    return (row["run_id"], row["task"], str(row["question_id"]))


def grade_queue(replies: Iterable[Mapping[str, Any]], grades: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Open replies (eval_responses rows) with text that nobody has graded in their current wording, in the queue's
    fixed order; each with its `reply_id` and `reply_sha`."""
    graded = {(g["reply_id"], g["reply_sha"]) for g in grades}
    out = []
    for r in replies:
        if not is_open_reply(r) or not (r.get("response") or "").strip():
            continue
        rid, sha = reply_id(*key_of(r)), reply_sha(r["response"])
        if (rid, sha) not in graded:
            out.append({**r, "reply_id": rid, "reply_sha": sha})
    return sorted(out, key=lambda r: r["reply_id"])


def human_verdicts(grades: Iterable[Mapping[str, Any]], replies: Iterable[Mapping[str, Any]]) -> dict[ReplyKey, str]:
    """(run_id, task, question_id) -> the human verdict on the reply as it reads now: right or wrong when every
    grader's latest grade of that wording says so; left out when one could not tell or graders disagree."""
    current = {reply_id(*key_of(r)): (key_of(r), reply_sha(r.get("response"))) for r in replies}
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for g in sorted(grades, key=lambda g: (g["created_at"], g["grade_id"])):
        if g["reply_id"] in current and current[g["reply_id"]][1] == g["reply_sha"]:
            latest[(g["reply_id"], g["grader"])] = g
    said: dict[str, set[str]] = {}
    for (rid, _), g in latest.items():
        said.setdefault(rid, set()).add(g["verdict"])
    return {current[rid][0]: v.pop() for rid, v in said.items() if len(v) == 1 and v <= {RIGHT, WRONG}}


def record_grade(warehouse: Warehouse, reply: Mapping[str, Any], grader: str, verdict: str, *,
                 request_id: str | None = None, seconds_spent: float | None = None) -> dict[str, Any]:
    """Append one grade of `reply` (an eval_responses row with its text). Sent twice with the same `request_id`,
    it is stored once (the stored row comes back with `duplicate: True`)."""
    grader = (grader or "").strip()
    if not grader:
        raise BadGrade("a grade needs the grader's name")
    if verdict not in VERDICTS:
        raise BadGrade(f"unknown verdict {verdict!r} ({' | '.join(VERDICTS)})")
    rid = reply_id(*key_of(reply))
    row = {"reply_id": rid, "reply_sha": reply_sha(reply.get("response")), "run_id": reply["run_id"],
           "benchmark": reply.get("benchmark"), "task": reply["task"], "question_id": str(reply["question_id"]),
           "grader": grader, "verdict": verdict, "seconds_spent": seconds_spent,
           "created_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}
    row["grade_id"] = "g" + _sha(grader, rid, request_id or f"{row['created_at']}:{verdict}")[:15]
    out: dict[str, Any] = {}

    def build(con):
        out.clear()
        seen = con.execute(f'SELECT 1 FROM "{HUMAN_GRADES.name}" WHERE grade_id = ?', [row["grade_id"]]).fetchall()
        out.update(row, duplicate=bool(seen))
        return [] if seen else [(HUMAN_GRADES, {"grade_id": row["grade_id"]}, [row], None)]

    warehouse.read_then_replace([HUMAN_GRADES], build)
    return dict(out)


def grades(warehouse: Warehouse) -> list[dict[str, Any]]:
    return warehouse.rows(HUMAN_GRADES) if warehouse.has_table(HUMAN_GRADES.name) else []
