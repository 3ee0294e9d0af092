"""A reviewer's counters ("8 done · 32 left"), computed from the stored decisions, queue and leases every time.

The page never carries a count over from the last item: after an undo, a rejection or an adjudication it shows
what a reload would show.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Progress:
    done: int  # questions this reviewer has a decision on in this queue (an undone one is not a decision)
    left: int  # items of the queue open to this reviewer, the one on screen and skipped ones included


def progress(reviewer: str, queue: Iterable[Mapping[str, Any]], decisions: Iterable[Mapping[str, Any]], *,
             adjudicating: bool, held_by_others: Collection[str] = ()) -> Progress:
    """`queue`: what `review_queue` or `adjudication_list` gives this reviewer now; `held_by_others`: question ids
    another reviewer leases at the moment (not open to this one until the lease lapses)."""
    done = {d["question_id"] for d in decisions
            if d["reviewer"] == reviewer and (d["action"] == "adjudicate") == adjudicating}
    left = sum(1 for item in queue if item["question_id"] not in held_by_others)
    return Progress(done=len(done), left=left)
