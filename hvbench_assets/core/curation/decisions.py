"""The review app's decision rules, on values only (no warehouse, no HTTP): who may decide what, the blind pick that
accepts, who may settle a dispute, and which item comes next. The routes (review/decisions.py) gather the values
and act on the ruling; queue.py and leases.py order and hand out items by the same rules.

- Anyone may accept, correct or reject any question: an assignment or a lease only schedules who sees it first.
- One key decides: a blind pick equal to the proposed answer is an accept, except on a flagged question (flags.py),
  where the proposed answer and the models' answers are shown first and the reviewer decides after a second look.
- A dispute (reviewers' verdicts differ, state.py) needs a third person: not one of its reviewers, and one of the
  named adjudicators when some were assigned.
- Next in the review queue: the reviewer's assigned questions, then flagged ones, then unreviewed ones nobody is
  assigned; within a part, the queue's order, skipping what another reviewer holds (leases.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REVIEW, ADJUDICATE = "review", "adjudicate"  # the queues a decision comes from and goes back to
ACCEPT, PICK = "accept", "pick"  # a pick: the one-key action, an accept when it decides, else nothing stored yet
ASSIGNED, FLAGGED, OPEN = 0, 1, 2  # the review queue's parts, in the order they come


def assigned_to(assignments: Iterable[Mapping[str, Any]], role: str) -> dict[str, set[str]]:
    """question_id -> the reviewers assigned to it in `role` (review | adjudicate)."""
    out: dict[str, set[str]] = {}
    for a in assignments:
        if (a.get("role") or REVIEW) == role:
            out.setdefault(a["question_id"], set()).add(a["reviewer"])
    return out


def queue_of(action: str) -> str:
    """The queue a decision belongs to: an adjudication to the adjudication list, the rest to the review queue."""
    return ADJUDICATE if action == ADJUDICATE else REVIEW


def pick_accepts(blind_choice: str | None, answer: str | None, flagged: bool) -> bool:
    """Whether a blind pick is stored as an accept at once: it names the proposed answer, on an unflagged question."""
    return blind_choice is not None and blind_choice == answer and not flagged


def may_adjudicate(who: str, state: Mapping[str, Any] | None, adjudicators: set[str] | None) -> bool:
    """Whether `who` may settle the question: it is disputed (`state`: its reviewed row), `who` is not one of its
    reviewers, and `who` is named when adjudicators were assigned (`adjudicators`; None: anyone)."""
    if state is None or state["state"] != "disputed" or who in state["reviewers"]:
        return False
    return adjudicators is None or who in adjudicators


@dataclass(frozen=True)
class Ruling:
    """What becomes of one decision a reviewer sends."""

    action: str | None  # the action to store; None: nothing is stored
    refused: str | None = None  # why `who` may not make this decision (the app answers 403)
    reveal: bool = False  # a pick that did not decide: show the proposed answer first

    @property
    def next_queue(self) -> str:
        return queue_of(self.action or REVIEW)


def rule(who: str, action: str, question_id: str, *, blind_choice: str | None = None, answer: str | None = None,
         flagged: bool = False, state: Mapping[str, Any] | None = None,
         adjudicators: set[str] | None = None) -> Ruling:
    """The ruling on `who` sending `action` on a question: a pick becomes an accept or a reveal; an adjudication
    needs the right to settle (may_adjudicate); any other action is stored as sent (store.py checks its fields)."""
    if action == PICK:
        return Ruling(ACCEPT) if pick_accepts(blind_choice, answer, flagged) else Ruling(None, reveal=True)
    if action == ADJUDICATE and not may_adjudicate(who, state, adjudicators):
        return Ruling(None, refused=f"{who} may not adjudicate {question_id}: not disputed, or {who} reviewed it")
    return Ruling(action)



def review_part(reviewer: str, state: str, assigned: set[str] | None, flagged: bool, decided: bool) -> int | None:
    """Where a question goes in `reviewer`'s review queue (ASSIGNED, FLAGGED, OPEN), or None: not theirs to review.
    `state`: its review state; `assigned`: its review assignees (None: unassigned); `flagged`: an open flag;
    `decided`: `reviewer` already decided on its current version. A disputed question waits for its adjudication."""
    if flagged and state != "disputed":
        return FLAGGED
    if decided:
        return None
    if assigned is not None:
        return ASSIGNED if reviewer in assigned and state != "disputed" else None
    return OPEN if state == "unreviewed" else None


def first_open(candidates: Sequence[Mapping[str, Any]], held: set[str],
               needs_lease: Callable[[Mapping[str, Any]], bool]) -> tuple[Mapping[str, Any] | None, int]:
    """The next item: the first of `candidates` (queue order) not held by another reviewer (`held`: question ids),
    where holding counts only for items that need a lease; and how many candidates are open."""
    open_items = [c for c in candidates if not (needs_lease(c) and c["question_id"] in held)]
    return (open_items[0] if open_items else None), len(open_items)
