"""Answer letters of the assembled benchmark: balanced over the letters, decided from the selected pool alone.

A stored question keeps the option order its task drew from its own id (so a rerun never changes it). When a
benchmark is assembled, each task's selected questions are visited in the order of a hash of their ids, and each
one's right answer moves to the letter furthest below its fair share so far (fair share: the sum of 1/n over the
task's questions offering that letter). Ties keep the stored letter when it is among them, else the letter whose
hash with the question id is smallest. The distractors keep their stored relative order. So:
- the same pool gives the same letters (nothing depends on row order, time or other benchmarks);
- with equal option counts the letters' counts differ by at most one; with mixed counts each letter stays
  within its fair share + 1.

The letters balanced here are the option letters only. Numbered questions (ASD, AVSM, EIC, T2H) name people
by the clip's person number drawn on their box ("Person 2", see core/vision `number_tracks`): an option moves
with its text, the video stays as it was rendered (letters-v1 renamed the person options after their new slot
and redrew the video).
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LETTERS = string.ascii_uppercase
LETTER_RULE_VERSION = "letters-v2"


@dataclass(frozen=True)
class Assembled:
    question_id: str
    options: list[dict[str, Any]]  # as exported: letters A, B, ... in the assembled order
    answer: str  # the assembled letter
    stored_answer: str  # the letter in the stored (reviewed) question
    order: list[str]  # stored letters in assembled order: order[i] is the stored letter now at LETTERS[i]


def _options(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    opts = row.get("options") or []
    return json.loads(opts) if isinstance(opts, str) else [dict(o) for o in opts]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def reorder(row: Mapping[str, Any], target: int) -> Assembled:
    """The question with its right answer moved to slot `target`, distractors in their stored relative order."""
    options = _options(row)
    stored = [o["letter"] for o in options]
    i = stored.index(row["answer"])
    rest = options[:i] + options[i + 1:]
    moved = rest[:target] + [options[i]] + rest[target:]
    out = [{**o, "letter": LETTERS[k]} for k, o in enumerate(moved)]
    return Assembled(row["question_id"], out, LETTERS[target], row["answer"], [o["letter"] for o in moved])


def assemble_letters(rows: Sequence[Mapping[str, Any]]) -> dict[str, Assembled]:
    """question_id -> its assembled options and answer, for the selected rows of one benchmark (question_id, task,
    options, answer). Per task, see the module doc."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("options") and r.get("answer"):
            by_task.setdefault(r["task"], []).append(r)
    out: dict[str, Assembled] = {}
    for task in sorted(by_task):
        used: dict[str, int] = {}
        fair: dict[str, float] = {}
        for row in sorted(by_task[task], key=lambda r: _hash(r["question_id"])):
            qid = row["question_id"]
            n = len(_options(row))
            letters = LETTERS[:n]
            deficit = {c: used.get(c, 0) - fair.get(c, 0.0) for c in letters}
            low = min(deficit.values())
            ties = [c for c in letters if deficit[c] <= low + 1e-9]
            pick = row["answer"] if row["answer"] in ties else min(ties, key=lambda c: _hash(f"{qid}:{c}"))
            out[qid] = reorder(row, letters.index(pick))
            used[pick] = used.get(pick, 0) + 1
            for c in letters:
                fair[c] = fair.get(c, 0.0) + 1 / n
    return out


def letter_counts(assembled: Mapping[str, Assembled], task_of: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """task -> letter -> right answers there (for the manifest)."""
    out: dict[str, dict[str, int]] = {}
    for qid, a in assembled.items():
        per = out.setdefault(task_of[qid], {})
        per[a.answer] = per.get(a.answer, 0) + 1
    return {t: dict(sorted(c.items())) for t, c in sorted(out.items())}
