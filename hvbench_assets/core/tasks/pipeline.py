"""One task family on one clip: select, build, place the answer, and the rows to store.

    outcome = run_family(family, labels, ask=..., red_box_video=..., annotation=..., synthesis=...)
    question, marking = outcome.question_row()   # a function of this question's own inputs only

Dagster-free: the task assets call it, tests call it on hand-made label rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hvbench_assets.core.render.inline import INLINE_MD_CHARS
from hvbench_assets.core.tasks import humans
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.faces import gate_tracks, with_skipped
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.family import TaskFamily
from hvbench_assets.core.tasks.rules import Verdict, assemble, seeded_position
from hvbench_assets.core.tasks.store import question_id, rng_for, seed_of
from hvbench_assets.core.vision.tables import number_tracks, person_number


# the rule that places the right answer in a stored question (2: seeded from the question id alone; 1 balanced
# it against other clips' questions, so a rerun could change a row); part of every task asset's code version
ANSWER_SLOT_RULE = "slot2"


def blocked_row(family: TaskFamily, reason: str) -> dict[str, Any]:
    """The candidate row of a family that cannot run here: the model it needs is not configured."""
    return {"task": family.name, "abbrev": family.abbrev, "status": "blocked", "rule": "model", "reason": reason,
            "measured": {}, "target_track_ids": [], "question_id": None}


@dataclass
class Outcome:
    family: TaskFamily
    labels: ClipLabels
    verdict: Verdict | None
    qid: str | None
    result: Draft | Pending | None
    numbers: Mapping[int, int] = field(default_factory=dict)  # the clip's person numbers (every L1 track)

    @property
    def status(self) -> str:
        if self.verdict is None or not self.verdict.selected:
            return "rejected"
        if isinstance(self.result, Pending):
            return self.result.status
        return "selected"

    @property
    def steps(self) -> list[dict[str, Any]]:
        """synthesis_steps of this question (descriptive families and AR), in order."""
        return list(getattr(self.result, "steps", None) or [])

    def candidate_row(self) -> dict[str, Any]:
        v, r = self.verdict, self.result
        reason = r.reason if isinstance(r, Pending) else v.reason if v else ""
        rule = (r.rule if isinstance(r, Pending) and r.rule else None) or (v.rule if v else "model")
        return {
            "task": self.family.name, "abbrev": self.family.abbrev, "status": self.status, "rule": rule,
            "reason": reason, "measured": v.measured if v else {},
            "target_track_ids": list(v.target_track_ids) if v and v.selected else [],
            "question_id": self.qid if v and v.selected else None,
        }

    def question_row(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(question row, final marking) or (None, None) when there is no question to store. The row depends on
        this question's inputs only (the answer slot is drawn from its id), so a rerun on unchanged inputs
        stores the same row; answer letters are balanced where the benchmark is assembled (core/benchmark/letters.py)."""
        if self.verdict is None or not self.verdict.selected:
            return None, None
        r, fam, v = self.result, self.family, self.verdict
        base = {
            "question_id": self.qid, "task": fam.name, "abbrev": fam.abbrev, "target_track_ids": list(v.target_track_ids),
            "rule": v.rule, "rule_version": fam.fingerprint(), "seed": seed_of(self.qid) % 2**62,
            "clip_sha256": self.labels.clip.sha256,
            "label_rows": self.labels.provenance(fam.reads, v.target_track_ids if fam.marking == "red_box" else None),
        }
        params = {"params": asdict(fam.params), "measured": v.measured}
        if isinstance(r, Pending):
            if r.status != "awaiting_annotation":
                return None, None
            return {**base, "status": r.status, "provisional": False, "question": None, "options": [], "answer": None,
                    "answer_text": None, "video_path": None, "marking": None, "rule_params": params,
                    "call_ids": r.call_ids, "annotation_ids": r.annotation_ids}, None
        n = len(r.distractors) + 1
        position = seeded_position(n, rng_for(self.qid + ":slot"))
        # a person option names the person's clip number (the one on the human_tracks key frame)
        numbers = {p.index: person_number(p.track_ids, self.numbers) for p in v.persons}
        options = assemble(r.truth, r.distractors, position, rng_for(self.qid + ":order"), numbers)
        marking = dict(r.marking)
        if marking["kind"] == "numbers" and "numbers" not in marking:  # the offered people's boxes
            offered = {o.person for o in (r.truth, *r.distractors) if o.person is not None}
            marking["numbers"] = {str(t): numbers[p.index] for p in v.persons if p.index in offered
                                  for t in p.track_ids}
        answer = options[position]
        return {**base, "status": r.status, "provisional": r.provisional, "question": r.question, "options": options,
                "answer": answer["letter"], "answer_text": answer["text"], "video_path": None, "marking": marking,
                "rule_params": {**params, "build": r.details, **r.rule_params}, "call_ids": r.call_ids,
                "annotation_ids": r.annotation_ids}, marking


def run_family(
    family: TaskFamily,
    labels: ClipLabels,
    ask: Callable | None = None,
    red_box_video: Callable[[tuple[int, ...]], Path] | None = None,
    annotation: Callable[[tuple[int, ...]], Mapping[str, Any] | None] | None = None,
    marked_video: Callable[[Mapping[str, Any]], Path] | None = None,
    synthesis: Any = None,
    bta_actions: tuple[str, ...] = (),
) -> Outcome:
    """Select, then build. `annotation(target track ids)` returns the latest human annotation for the
    family's kind (HC, AST, TSA); model calls happen in the build through `ask`."""
    numbers = number_tracks(list(labels.tracks))  # over every L1 track, before any is set aside
    people, not_people = humans.real_people(labels)
    labels, skipped = gate_tracks(people, family.face_gate)
    verdict = humans.noted(with_skipped(family.select(labels, family.params), skipped), not_people, people)
    if not verdict.selected:
        return Outcome(family, labels, verdict, None, None, numbers)
    qid = question_id(family.name, labels.clip.sha256, verdict.target, family.fingerprint())
    ctx = BuildContext(labels=labels, verdict=verdict, rng=rng_for(qid), params=family.params, numbers=numbers,
                       ask=ask, red_box_video=red_box_video, marked_video=marked_video, synthesis=synthesis,
                       bta_actions=bta_actions, family=family,
                       annotation=annotation(verdict.target_track_ids) if annotation and family.annotation else None)
    return Outcome(family, labels, verdict, qid, family.build(ctx), numbers)


def question_at_a_glance(q: Mapping[str, Any] | None, status: str, reason: str) -> str:
    """What a person opening a task partition came for, short enough to show inline: the question, its options with
    the answer marked (long texts cut; the full ones are in `preview`), or why there is no question."""
    if not q or not q.get("options"):
        return f"**No question**: {status}" + (f", {reason}" if reason else "")

    def cut(text: str, n: int) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= n else text[: n - 1] + "…"

    for width in (160, 100, 60, 30):
        opts = "\n".join(f"- {'**' if o['letter'] == q['answer'] else ''}{o['letter']}. {cut(o['text'], width)}"
                         f"{' (answer)**' if o['letter'] == q['answer'] else ''}" for o in q["options"])
        text = f"{cut(q['question'], 2 * width)}\n\n{opts}"
        if len(text) < INLINE_MD_CHARS:
            return text
    return text[: INLINE_MD_CHARS - 1]


def preview_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The questions as a reader sees them, for the asset's metadata."""
    out = []
    for q in rows:
        if not q.get("options"):
            out.append(f"**{q['abbrev']}** `{q['question_id']}`: {q['status']}")
            continue
        opts = "\n".join(f"- {o['letter']}. {o['text']}" + (" **(answer)**" if o["letter"] == q["answer"] else "")
                         for o in q["options"])
        out.append(f"**{q['abbrev']}** `{q['question_id']}` ({q['status']}{', provisional' if q.get('provisional') else ''})"
                   f"\n\n{q['question']}\n\n{opts}\n\nvideo: `{q.get('video_path')}`")
    return "\n\n".join(out) or "no question"
