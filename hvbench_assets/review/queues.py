"""What the pages and the API derive from the review state, by the rules of core/curation (queue.py, decisions.py,
flags.py, progress.py). Each is kept until a part of the state it reads changes (live.Snapshot.memo): a reload,
another reviewer's page or the stats page recompute nothing until a decision, assignment or question comes in, and
a decision leaves the annotation queue and the question indexes as they were."""

from __future__ import annotations

from typing import Any

from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.decisions import ADJUDICATE, REVIEW, assigned_to
from hvbench_assets.core.curation.flags import open_flags, shown_flag
from hvbench_assets.core.curation.progress import Progress, progress
from hvbench_assets.core.curation.queue import adjudication_list, annotation_queue, review_queue
from hvbench_assets.core.curation.state import is_question
from hvbench_assets.review.app_state import AppState

State = dict[str, Any]  # AppState.load_state's


def flags_open(s: State) -> dict[str, list[dict[str, Any]]]:
    return s["memo"]("open_flags", lambda: open_flags(s["flags"], s["decisions"], s["hashes"]),
                     ("flags", "decisions", "hashes"))


def flag_of(s: State, qid: str, picked: bool) -> dict[str, Any] | None:
    """The evaluation's open flags on the question as the page shows them (flags.shown_flag), or None."""
    found = flags_open(s).get(qid)
    return shown_flag(found, picked) if found else None


def my_queue(app: AppState, s: State, reviewer: str) -> list[dict[str, Any]]:
    reviewable = s["memo"]("reviewable", lambda: [q for q in s["questions"] if is_question(q)], ("questions",))
    return s["memo"](("review_queue", reviewer), lambda: review_queue(
        reviewable, s["decisions"], s["assignments"], app.cfg.excluded, reviewer, s["annotations"],
        states=s["states"], hashes=s["hashes"], presorted=True, flagged=flags_open(s)))


def my_disputes(app: AppState, s: State, reviewer: str | None) -> list[dict[str, Any]]:
    return s["memo"](("adjudication_list", reviewer), lambda: adjudication_list(
        s["questions"], s["decisions"], s["assignments"], app.cfg.excluded, reviewer, s["annotations"],
        reviewed=s["reviewed"]), ("reviewed", "assignments"))  # given `reviewed`, it reads nothing else


def adjudicators_of(s: State) -> dict[str, set[str]]:
    return s["memo"]("adjudicators", lambda: assigned_to(s["assignments"], ADJUDICATE), ("assignments",))


def assigned_for_review(s: State) -> set[str]:
    return s["memo"]("assigned", lambda: set(assigned_to(s["assignments"], REVIEW)), ("assignments",))


def counters(app: AppState, s: State, reviewer: str, adjudicating: bool) -> Progress:
    """Done and left for the progress bar, from the state and the leases as they are now (never carried over
    from the last item: an undo, a rejection or an adjudication shows what a reload would)."""
    queue = ADJUDICATE if adjudicating else REVIEW
    held = leases.held(app.wh, reviewer, queue) - (set() if adjudicating else assigned_for_review(s))
    return s["memo"](("progress", reviewer, adjudicating, frozenset(held)), lambda: progress(
        reviewer, my_disputes(app, s, reviewer) if adjudicating else my_queue(app, s, reviewer), s["decisions"],
        adjudicating=adjudicating, held_by_others=held))


def annotation_items(s: State) -> list[dict[str, Any]]:
    return s["memo"]("annotation_queue", lambda: annotation_queue(s["questions"], s["annotations"]),
                     ("questions", "annotations"))


def decisions_on(s: State, qid: str) -> list[dict[str, Any]]:
    """The decisions on one question, in the state's order."""
    def index() -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for d in s["decisions"]:
            out.setdefault(d["question_id"], []).append(d)
        return out
    return s["memo"]("decisions_by_question", index, ("decisions",)).get(qid, [])
