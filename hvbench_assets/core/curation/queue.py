"""What a reviewer sees next: the review queue, the adjudication list and the annotation queue.

A question assigned to reviewers (two, for agreement) goes to each of them until each has decided on its
current version; an unassigned question goes to anyone while it is unreviewed. A regenerated question
(new content hash) is back in the queue because no decision matches its hash. A question the evaluation flagged
(flags.py) goes to anyone, whatever its state and earlier decisions, until someone decides on it after the flag.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from typing import Any

from hvbench_assets.core.curation.decisions import ADJUDICATE, REVIEW, assigned_to, may_adjudicate, review_part
from hvbench_assets.core.curation.state import curate, is_question
from hvbench_assets.core.tasks.catalog import ANNOTATED
from hvbench_assets.core.tasks.store import question_content_hash


def _decided(decisions: Iterable[Mapping[str, Any]], reviewer: str) -> set[tuple[str, str]]:
    return {(d["question_id"], d["content_hash"]) for d in decisions
            if d["reviewer"] == reviewer and d["action"] != "adjudicate"}


def review_queue(questions: list[Mapping[str, Any]], decisions: list[Mapping[str, Any]],
                 assignments: list[Mapping[str, Any]], excluded: frozenset[str], reviewer: str,
                 annotations: list[Mapping[str, Any]] = (), *, states: Mapping[str, Mapping[str, Any]] | None = None,
                 hashes: Mapping[str, str] | None = None, presorted: bool = False,
                 flagged: Mapping[str, Any] | None = None) -> list[Mapping]:
    """Questions `reviewer` should review: assigned ones first, then flagged ones (`flagged`: question_id -> its
    open flags, flags.open_flags), then the rest, each part by task and clip. A disputed question waits for its
    adjudication even when flagged. `states` (question_id -> reviewed row) and `hashes` (question_id -> content
    hash): precomputed by a caller that keeps them (live.py), whose `questions` may come in (task, clip, id) order
    already (`presorted`)."""
    if states is None:
        states = {r["question_id"]: r for r in curate(questions, decisions, excluded, assignments, annotations)}
    assigned = assigned_to(assignments, REVIEW)
    done = _decided(decisions, reviewer)
    flagged = flagged or {}
    parts: tuple[list, list, list] = ([], [], [])  # ASSIGNED, FLAGGED, OPEN
    for q in questions:
        if not is_question(q):
            continue
        qid = q["question_id"]
        decided = bool(done) and (qid, hashes[qid] if hashes is not None else question_content_hash(dict(q))) in done
        part = review_part(reviewer, states[qid]["state"], assigned.get(qid), qid in flagged, decided)
        if part is not None:
            parts[part].append(q)
    if presorted:
        return [q for part in parts for q in part]
    order = lambda q: (q["task"] or "", q["video_id"] or "", q["question_id"])  # noqa: E731
    return [q for part in parts for q in sorted(part, key=order)]


def adjudication_list(questions: list[Mapping[str, Any]], decisions: list[Mapping[str, Any]],
                      assignments: list[Mapping[str, Any]], excluded: frozenset[str],
                      reviewer: str | None = None, annotations: list[Mapping[str, Any]] = (), *,
                      reviewed: list[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Disputed questions; with `reviewer`, only those a third person may settle (not one of its reviewers,
    and named when adjudicators were assigned). `reviewed`: curate()'s rows when the caller has them."""
    adjudicators = assigned_to(assignments, ADJUDICATE)
    out = []
    for row in reviewed if reviewed is not None else curate(questions, decisions, excluded, assignments, annotations):
        if row["state"] != "disputed":
            continue
        if reviewer is not None and not may_adjudicate(reviewer, row, adjudicators.get(row["question_id"])):
            continue
        out.append(row)
    return out


def shown_order(question: Mapping[str, Any], reviewer: str, chash: str | None = None) -> list[str]:
    """The option letters in the order this reviewer sees them blind: shuffled, but the same on a reload."""
    letters = [o["letter"] for o in question.get("options") or []]
    chash = chash or question_content_hash(dict(question))
    seed = hashlib.sha256(f"{question['question_id']}:{chash}:{reviewer}".encode())
    rng = random.Random(int(seed.hexdigest()[:15], 16))
    shuffled = letters[:]
    for _ in range(5):  # never the stored order when another exists, so position gives nothing away
        rng.shuffle(shuffled)
        if shuffled != letters or len(set(letters)) < 2:
            break
    return shuffled


def annotation_queue(questions: list[Mapping[str, Any]], annotations: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Clips (and red-boxed targets) whose HC / AST / TSA question waits for a human answer and has none yet.
    AST and TSA share one action-time annotation of the same target: one item for both."""
    have = {(a["video_id"], a["kind"], a.get("track_id")) for a in annotations}
    items: dict[tuple, dict[str, Any]] = {}
    for q in questions:
        kind = ANNOTATED.get(q.get("abbrev") or "")
        if kind is None or q.get("status") != "awaiting_annotation":
            continue
        targets = [int(t) for t in q.get("target_track_ids") or []]
        if kind == "count":
            if (q["video_id"], "count", None) in have:
                continue
            key = (q["video_id"], "count", None)
        else:
            if any((q["video_id"], "action", t) in have for t in targets):
                continue
            key = (q["video_id"], "action", tuple(targets))
        item = items.setdefault(key, {"video_id": q["video_id"], "kind": kind, "track_ids": targets,
                                      "question_ids": [], "tasks": [], "question_id": q["question_id"]})
        item["question_ids"].append(q["question_id"])
        item["tasks"].append(q["abbrev"])
    return sorted(items.values(), key=lambda i: (i["video_id"], i["kind"]))
