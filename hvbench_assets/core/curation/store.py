"""Curation reads and writes through the Warehouse: append a decision, rebuild `reviewed_questions`."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.curation.state import ACTIONS, REASONS, curate
from hvbench_assets.core.curation.tables import (REVIEW_ASSIGNMENTS, REVIEW_DECISIONS, REVIEWED_QUESTIONS,
                                                 UNDONE_DECISIONS)
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import TableSpec, Warehouse


class BadDecision(ValueError):
    pass


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _table_rows(con, spec: TableSpec) -> list[dict[str, Any]]:
    """Rows of `spec` on an open connection (inside a held lock), JSON columns decoded; [] if absent."""
    if not con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [spec.name]).fetchall():
        return []
    cur = con.execute(f'SELECT * FROM "{spec.name}"')
    cols = [c[0] for c in cur.description]
    json_cols = {n for n, t in spec.all_columns if t.upper() == "JSON"}
    out = []
    for values in cur.fetchall():
        row = dict(zip(cols, values))
        for c in json_cols & row.keys():
            if isinstance(row[c], str):
                row[c] = json.loads(row[c])
        out.append(row)
    return out


def rebuild_reviewed(warehouse: Warehouse, excluded: frozenset[str], provenance: Mapping[str, Any]) -> list[dict]:
    """Bring every reviewed_questions row up to date from questions + decisions + assignments + annotations,
    writing only the rows that changed, in short batches (reviewed.py says how a decision appended meanwhile
    is never lost)."""
    from hvbench_assets.core.curation.reviewed import update_reviewed

    return update_reviewed(warehouse, excluded, provenance).rows


VERDICT_FIELDS = ("action", "blind_choice", "corrected_answer", "corrected_text", "reason", "reason_text")


def decision_id_for(reviewer: str, question_id: str, request_id: str) -> str:
    """The id of a decision sent with an idempotency key: the same key from the same reviewer names one row."""
    return "d" + hashlib.sha256(f"{reviewer}\0{question_id}\0{request_id}".encode()).hexdigest()[:15]


def record_decision(warehouse: Warehouse, question: Mapping[str, Any], reviewer: str, action: str, *,
                    blind_choice: str | None = None, shown_order: list[str] | None = None,
                    corrected_answer: str | None = None, corrected_text: str | None = None,
                    reason: str | None = None, reason_text: str | None = None,
                    seconds_spent: float | None = None, content_hash: str | None = None,
                    watched_s: float | None = None, request_id: str | None = None) -> dict[str, Any]:
    """Validate and append one decision on `question` (a questions row). `content_hash` is the version the
    reviewer saw; if the question changed since, the decision is refused (it would apply to nothing).

    Stored once: a decision whose `request_id` (idempotency key) was seen before from this reviewer, or, without
    a key, one identical to the reviewer's latest on this version, is not stored again; the stored row is
    returned with `duplicate: True`. The check and the write are one transaction under the warehouse lock."""
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise BadDecision("a decision needs the reviewer's name")
    if action not in ACTIONS:
        raise BadDecision(f"unknown action {action!r} ({' | '.join(ACTIONS)})")
    current = question_content_hash(dict(question))
    if content_hash is not None and content_hash != current:
        raise BadDecision(f"question {question['question_id']} changed since it was shown "
                          f"(saw {content_hash}, now {current}); reload it")
    letters = [o.get("letter") for o in question.get("options") or []]
    for name, letter in (("blind choice", blind_choice), ("corrected answer", corrected_answer)):
        if letter is not None and letter not in letters:
            raise BadDecision(f"{name} {letter!r} is not an option of {question['question_id']} ({letters})")
    corrected_text = (corrected_text or "").strip() or None
    if action == "correct" and not corrected_answer and not corrected_text:
        raise BadDecision("a correction needs another option or a written answer")
    if action == "correct" and corrected_answer == question.get("answer") and not corrected_text:
        raise BadDecision("the corrected answer is the proposed one: accept instead")
    if action == "reject":
        if reason not in REASONS:
            raise BadDecision(f"a rejection needs a reason ({' | '.join(REASONS)}), got {reason!r}")
        if reason == "other" and not (reason_text or "").strip():
            raise BadDecision("reason 'other' needs a text")
    if action == "adjudicate" and reason is not None and reason not in REASONS:
        raise BadDecision(f"unknown reason {reason!r} ({' | '.join(REASONS)})")
    now = _now()
    row = {
        "question_id": question["question_id"], "video_id": question.get("video_id"), "task": question.get("task"),
        "abbrev": question.get("abbrev"), "content_hash": current, "reviewer": reviewer,
        "blind_choice": blind_choice, "shown_order": shown_order, "action": action,
        "corrected_answer": corrected_answer if action in ("correct", "adjudicate") else None,
        "corrected_text": corrected_text if action in ("correct", "adjudicate") else None,
        "reason": reason if action in ("reject", "adjudicate") else None,
        "reason_text": (reason_text or "").strip() or None, "created_at": now,
        "seconds_spent": float(seconds_spent) if seconds_spent is not None else None,
        "watched_s": float(watched_s) if watched_s is not None else None,
    }
    row["decision_id"] = (decision_id_for(reviewer, row["question_id"], request_id) if request_id else
                          "d" + hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:15])
    out: dict[str, Any] = {}

    def build(con):
        out.clear()
        if request_id:
            for spec in (REVIEW_DECISIONS, UNDONE_DECISIONS):
                if _has(con, spec) and con.execute(f'SELECT 1 FROM "{spec.name}" WHERE decision_id = ?',
                                                   [row["decision_id"]]).fetchall():
                    out.update(row, duplicate=True)
                    return []
        elif _has(con, REVIEW_DECISIONS):
            cols = ", ".join(f'"{c}"' for c in VERDICT_FIELDS + ("decision_id",))
            last = con.execute(f'SELECT {cols} FROM "{REVIEW_DECISIONS.name}" WHERE question_id = ? AND reviewer = ? '
                               "AND content_hash = ? ORDER BY created_at DESC, decision_id DESC LIMIT 1",
                               [row["question_id"], reviewer, current]).fetchall()
            if last and tuple(last[0][:-1]) == tuple(row[c] for c in VERDICT_FIELDS):
                out.update(row, decision_id=last[0][-1], duplicate=True)
                return []
        out.update(row, duplicate=False)
        return [(REVIEW_DECISIONS, {"decision_id": row["decision_id"]}, [row], None)]

    warehouse.read_then_replace([REVIEW_DECISIONS], build)
    return dict(out)


def _has(con, spec: TableSpec) -> bool:
    return bool(con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [spec.name]).fetchall())


def undo_decision(warehouse: Warehouse, reviewer: str, decision_id: str) -> dict[str, Any]:
    """Take back `reviewer`'s decision `decision_id`: it moves from review_decisions to undone_decisions (kept,
    with the time of the undo), so every reader sees the state as if it had not been made. Only the reviewer's
    own latest decision on that question can be undone."""
    out: dict[str, Any] = {}

    def build(con):
        out.clear()
        rows = [r for r in _table_rows(con, REVIEW_DECISIONS) if r["decision_id"] == decision_id] \
            if _has(con, REVIEW_DECISIONS) else []
        if not rows:
            raise BadDecision(f"no decision {decision_id} to undo (already undone?)")
        d = rows[0]
        if d["reviewer"] != reviewer:
            raise BadDecision(f"decision {decision_id} is {d['reviewer']}'s, not {reviewer}'s")
        later = con.execute(f'SELECT count(*) FROM "{REVIEW_DECISIONS.name}" WHERE question_id = ? AND reviewer = ? '
                            "AND (created_at > ? OR (created_at = ? AND decision_id > ?))",
                            [d["question_id"], reviewer, d["created_at"], d["created_at"], decision_id]).fetchone()[0]
        if later:
            raise BadDecision(f"decision {decision_id} is not {reviewer}'s latest on {d['question_id']}")
        out.update(d)
        return [(REVIEW_DECISIONS, {"decision_id": decision_id}, [], None),
                (UNDONE_DECISIONS, {"decision_id": decision_id}, [{**d, "undone_at": _now()}], None)]

    warehouse.read_then_replace([REVIEW_DECISIONS, UNDONE_DECISIONS], build)
    return out


def decisions(warehouse: Warehouse, **where: Any) -> list[dict[str, Any]]:
    return warehouse.rows(REVIEW_DECISIONS, order_by="created_at, decision_id", **where)


def load_state(warehouse: Warehouse) -> dict[str, list[dict[str, Any]]]:
    """Everything the review queues read, each table read once (absent tables are empty)."""
    from hvbench_assets.core.tasks.store import ANNOTATIONS

    return {"questions": warehouse.rows(QUESTIONS), "decisions": decisions(warehouse),
            "assignments": warehouse.rows(REVIEW_ASSIGNMENTS),
            "annotations": warehouse.rows(ANNOTATIONS, order_by="created_at")}


def assign(warehouse: Warehouse, question_ids: list[str], reviewers: list[str], role: str = "review") -> int:
    """Assign each question to each reviewer (idempotent: an existing assignment is kept as it was)."""
    if role not in ("review", "adjudicate"):
        raise BadDecision(f"unknown role {role!r} (review | adjudicate)")
    names = [r.strip() for r in reviewers if r and r.strip()]
    if not names:
        raise BadDecision("name at least one reviewer")
    existing = {(a["question_id"], a["reviewer"]) for a in warehouse.rows(REVIEW_ASSIGNMENTS)}
    now = _now()
    batches = [({"question_id": q, "reviewer": r}, [{"role": role, "assigned_at": now}])
               for q in question_ids for r in names if (q, r) not in existing]
    return warehouse.replace_many(REVIEW_ASSIGNMENTS, batches) if batches else 0


def human_baseline_of(warehouse: Warehouse, excluded: frozenset[str]) -> dict[str, float]:
    """task -> reviewers' blind-choice accuracy, read from the warehouse (for the evaluation report)."""
    from hvbench_assets.core.curation.agreement import human_baseline, reviewer_accuracy

    s = load_state(warehouse)
    reviewed = curate(s["questions"], s["decisions"], excluded, s["assignments"], s["annotations"])
    return human_baseline(reviewer_accuracy(s["questions"], s["decisions"], reviewed))
