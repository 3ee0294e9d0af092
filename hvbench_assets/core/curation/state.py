"""The review state of every current question, computed from `questions` and `review_decisions` alone.

Rules (pure; the asset and the web app call the same function):
- A decision counts only for the content hash it was made on: a regenerated question is unreviewed again.
- Each reviewer's latest accept / correct / reject counts. Reviewers whose verdicts differ (another
  answer, another text, or reject vs keep) make the question `disputed` until an `adjudicate` decision,
  whose verdict then wins.
- A question assigned to several reviewers stays `unreviewed` until every one of them has decided.
- Tasks excluded from review by configuration are `not_reviewed` unless someone decided on them anyway.
- Questions whose answer a human annotated (HC, AST, TSA) are reviewed like generated ones, unless two
  annotators gave the same answer independently (`annotators_agree`): then they are `not_reviewed` (exported)
  until someone decides on them.
- Annotation requests (`awaiting_annotation`, no question text yet) are not questions and get no row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.tasks.catalog import ANNOTATED, NOT_REVIEWED, TASK_BY_ABBREV, task_info
from hvbench_assets.core.tasks.store import question_content_hash

REVIEW_ACTIONS = ("accept", "correct", "reject")
ACTIONS = REVIEW_ACTIONS + ("adjudicate",)
REASONS = {
    "bad_track": "bad track (the box follows the wrong person or jumps)",
    "frozen_video": "frozen or broken video",
    "ambiguous": "ambiguous (more than one option fits)",
    "wrong_label": "wrong label (the facts behind the question are wrong)",
    "other": "other (say why)",
}
# The catalog's review rules: AVAD and SCM are reliable by construction. HC, AST and TSA take their truth from one
# human annotation (ANNOTATED), which is reviewed like a generated answer unless a second annotator agrees.
DEFAULT_EXCLUDED = NOT_REVIEWED
STATES = ("accepted", "corrected", "rejected", "unreviewed", "disputed", "not_reviewed")
CURATION_RULE_VERSION = "1"


def excluded_tasks(raw: str | None) -> frozenset[str]:
    """Abbreviations excluded from review: HVBENCH_REVIEW_EXCLUDE ("AVAD,SCM,..." or "none"); unset → default."""
    if raw is None or not raw.strip():
        return frozenset(DEFAULT_EXCLUDED)
    if raw.strip().lower() == "none":
        return frozenset()
    out = set()
    for part in raw.split(","):
        if not part.strip():
            continue
        info = task_info(part)
        if info is None:
            raise ValueError(f"review exclusion {part.strip()!r} is not one of the 16 tasks ({', '.join(TASK_BY_ABBREV)})")
        out.add(info.abbrev)
    return frozenset(out)


@dataclass(frozen=True)
class Verdict:
    kind: str  # keep | reject
    letter: str | None = None
    text: str | None = None
    reason: str | None = None

    @property
    def agreement_key(self) -> tuple:
        """What two reviewers must share to agree: rejecting (for any reason), or the same final answer."""
        if self.kind == "reject":
            return ("reject",)
        return ("keep", self.letter, " ".join(self.text.split()).lower() if self.text else None)


def verdict_of(decision: Mapping[str, Any], proposed: str | None) -> Verdict:
    """The final answer one decision asks for. An adjudication names a letter or a text to keep, or only a
    reason to reject; naming nothing keeps the proposed answer."""
    action = decision["action"]
    if action not in ACTIONS:
        raise ValueError(f"decision {decision.get('decision_id')}: unknown action {action!r}")
    text = (decision.get("corrected_text") or "").strip() or None
    letter = decision.get("corrected_answer") or None
    if action == "reject" or (action == "adjudicate" and not letter and not text and decision.get("reason")):
        return Verdict("reject", reason=decision.get("reason") or "other")
    if action == "accept":
        return Verdict("keep", proposed)
    return Verdict("keep", letter or proposed, text)


def _sorted(decisions: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(decisions, key=lambda d: (str(d.get("created_at") or ""), d["decision_id"]))


def _state_of(v: Verdict, proposed: str | None) -> str:
    if v.kind == "reject":
        return "rejected"
    return "accepted" if v.letter == proposed and not v.text else "corrected"


def apply_verdict(options: list[dict], v: Verdict) -> tuple[list[dict], str | None, str | None]:
    """Options after a correction: a written text replaces the text of the chosen letter's option (on a copy of
    each option: only their top-level keys change, and a deep copy was a third of curating 20,000 questions)."""
    options = [dict(o) for o in options]
    if v.kind == "reject" or v.letter is None:
        return options, v.letter, None
    for opt in options:
        if opt.get("letter") == v.letter:
            if v.text:
                opt.update(text=v.text, origin="review")
            return options, v.letter, opt.get("text")
    raise ValueError(f"answer letter {v.letter!r} is not among the options {[o.get('letter') for o in options]}")


def _agreement_key(abbrev: str, value: Mapping[str, Any]) -> tuple:
    """What two annotations must share to agree for a task: what its family's annotation says (the count, the
    start second, the action text and its second); "ongoing" and "none" agree with themselves."""
    if value.get("none") or value.get("ongoing"):
        return ("none",) if value.get("none") else ("ongoing",)
    return TASK_BY_ABBREV[abbrev].annotation.agreement(value)


def annotators_agree(question: Mapping[str, Any], annotations: Iterable[Mapping[str, Any]]) -> list[str]:
    """The annotators (two or more) whose latest annotation of this question's clip and target gives the same
    answer as the one the question was built from; [] when there is no such agreement."""
    abbrev, ids = question.get("abbrev"), set(question.get("annotation_ids") or [])
    kind = ANNOTATED.get(abbrev or "")
    if kind is None or not ids:
        return []
    targets = {int(t) for t in question.get("target_track_ids") or []}
    mine = [a for a in annotations if a["video_id"] == question.get("video_id") and a["kind"] == kind
            and (kind == "count" or a.get("track_id") is None or int(a["track_id"]) in targets)]
    used = [a for a in mine if a["annotation_id"] in ids]
    if not used:
        return []
    latest: dict[str, Mapping[str, Any]] = {}
    for a in sorted(mine, key=lambda a: (str(a.get("created_at")), a["annotation_id"])):
        latest[a["annotator"]] = a
    key = _agreement_key(abbrev, used[-1]["value"])
    agree = sorted(who for who, a in latest.items() if _agreement_key(abbrev, a["value"]) == key)
    return agree if len(agree) >= 2 else []


def curate_question(question: Mapping[str, Any], decisions: Iterable[Mapping[str, Any]],
                    excluded: frozenset[str] = frozenset(DEFAULT_EXCLUDED),
                    assigned: Iterable[str] = (), annotations: Iterable[Mapping[str, Any]] = (),
                    chash: str | None = None) -> dict[str, Any]:
    """The reviewed_questions row of one question from the decisions made on its current content
    (`chash`: its content hash when the caller has it already)."""
    chash = chash or question_content_hash(dict(question))
    proposed = question.get("answer")
    options = list(question.get("options") or [])
    mine = _sorted(d for d in decisions if d["question_id"] == question["question_id"] and d["content_hash"] == chash)
    adjudications = [d for d in mine if d["action"] == "adjudicate"]
    latest: dict[str, Mapping[str, Any]] = {}
    for d in mine:
        if d["action"] != "adjudicate":
            latest[d["reviewer"]] = d
    verdicts = {r: verdict_of(d, proposed) for r, d in latest.items()}
    used = list(latest.values())
    final: Verdict | None = None
    reason = None
    if adjudications:
        used.append(adjudications[-1])
        final = verdict_of(adjudications[-1], proposed)
        reason = f"adjudicated by {adjudications[-1]['reviewer']}"
    elif not verdicts:
        agreed = annotators_agree(question, annotations) if not set(assigned) else []
        state = "not_reviewed" if question.get("abbrev") in excluded or agreed else "unreviewed"
        if agreed:
            reason = f"annotators agree: {', '.join(agreed)}"
    elif len({v.agreement_key for v in verdicts.values()}) > 1:
        state = "disputed"
        reason = "; ".join(f"{r}: {'reject' if v.kind == 'reject' else v.letter + (' (text)' if v.text else '')}"
                           for r, v in sorted(verdicts.items()))
    elif waiting := sorted(set(assigned) - set(verdicts)):
        state = "unreviewed"
        reason = f"waiting for {', '.join(waiting)}"
    else:
        final = next(iter(verdicts.values()))
    answer, answer_text = proposed, question.get("answer_text")
    if final is not None:
        state = _state_of(final, proposed)
        if final.kind == "reject":
            reason = final.reason if not reason else f"{reason}: {final.reason}"
        else:
            options, answer, answer_text = apply_verdict(options, final)
    return {
        "question_id": question["question_id"], "video_id": question.get("video_id"), "task": question.get("task"),
        "abbrev": question.get("abbrev"), "content_hash": chash, "state": state, "answer": answer,
        "answer_text": answer_text, "options": options,
        "reviewers": sorted({d["reviewer"] for d in used}), "decision_ids": [d["decision_id"] for d in _sorted(used)],
        "reason": reason,
    }


def is_question(row: Mapping[str, Any]) -> bool:
    """A question a reviewer can see (annotation requests have no text and no answer yet)."""
    return row.get("status") != "awaiting_annotation" and bool(row.get("question")) and bool(row.get("answer"))


def curate(questions: Iterable[Mapping[str, Any]], decisions: Iterable[Mapping[str, Any]],
           excluded: frozenset[str] = frozenset(DEFAULT_EXCLUDED),
           assignments: Iterable[Mapping[str, Any]] = (),
           annotations: Iterable[Mapping[str, Any]] = (),
           hashes: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """reviewed_questions rows for every current question (see module doc). `hashes`: question_id -> content
    hash, when the caller keeps them."""
    by_q: dict[str, list] = {}
    for d in decisions:
        by_q.setdefault(d["question_id"], []).append(d)
    assigned: dict[str, set[str]] = {}
    for a in assignments:
        if a.get("role", "review") == "review":
            assigned.setdefault(a["question_id"], set()).add(a["reviewer"])
    by_video: dict[str, list] = {}  # annotators_agree reads the question's clip only: no scan of all per question
    for a in annotations:
        by_video.setdefault(a["video_id"], []).append(a)
    hashes = hashes or {}
    rows = [curate_question(q, by_q.get(q["question_id"], []), excluded, assigned.get(q["question_id"], ()),
                            by_video.get(q.get("video_id"), ()), hashes.get(q["question_id"]))
            for q in questions if is_question(q)]
    return sorted(rows, key=lambda r: (r["task"] or "", r["video_id"] or "", r["question_id"]))


def state_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """abbrev -> state -> count (for metadata and the UI)."""
    out: dict[str, dict[str, int]] = {}
    for (abbrev, state), n in Counter((r["abbrev"], r["state"]) for r in rows).items():
        out.setdefault(abbrev, dict.fromkeys(STATES, 0))[state] += n
    return out
