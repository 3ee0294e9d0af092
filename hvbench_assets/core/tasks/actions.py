"""What AST (action at a specified time) and TSA (time of a specific action) share: the truth is a human's
action-time annotation of the red-boxed target, on clips and targets as BTA's (> 7 s, most-present person), and
the wording every AST action option and annotated action has (`action_form`, which `hvbench annotate action`
applies too)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.tasks.base import BuildContext, Pending
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict, check_range, most_present, persons, reject

# The form of every AST action option, the annotated truth and the model's distractors alike (the distractor
# prompt asks for it), so the right option cannot be told apart by its wording.
ACTION_PREFIX = "begins to"
ACTION_WORDS = (3, 10)  # "begins to wave" .. a short phrase
ACTION_MAX_CHARS = 80


def action_form(text: object, prefixed: bool = True) -> tuple[str, str | None]:
    """(the text in the options' form: one line, no final period, lower-case start; None) or (text, why not)."""
    if not isinstance(text, str) or not text.strip():
        return "", "the action text is missing"
    if any(c in text for c in "\r\n\t"):
        return text, "the action text must be one line"
    clean = " ".join(text.split()).rstrip(".").strip()
    clean = clean[:1].lower() + clean[1:]
    words = clean.split()
    lo, hi = ACTION_WORDS if prefixed else (1, ACTION_WORDS[1])
    if prefixed and not clean.startswith(ACTION_PREFIX + " "):
        return clean, (f"write it like the distractors: a short action beginning with {ACTION_PREFIX!r} "
                       f"(e.g. 'begins to wave'), got {clean!r}")
    if not lo <= len(words) <= hi or len(clean) > ACTION_MAX_CHARS:
        return clean, (f"write a short action like the distractors ({lo}-{hi} words, at most {ACTION_MAX_CHARS} "
                       f"characters), got {len(words)} words")
    return clean, None


@dataclass(frozen=True)
class ActionParams:
    min_duration_s: float = 7.0  # strictly longer
    min_gap_s: int = 3  # TSA distractors at least this far from the true second


def select_target(labels: ClipLabels, p: ActionParams, rule: str) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    target = most_present(persons(labels))
    if target is None:
        return reject("people", "people=0: no face track (L1)", m)
    return Verdict(True, rule, "the most-present person of a clip longer than 7 s", m, target=list(target.track_ids),
                   target_track_ids=target.track_ids)


def annotation_of(ctx: BuildContext) -> Pending | dict:
    """The target's latest action annotation, or the Pending that asks a human for one."""
    ann = ctx.annotation
    if ann is None:
        tid = ctx.verdict.target_track_ids[0]
        return Pending("awaiting_annotation", "needs the target's action and its start second: hvbench annotate action "
                       f"{ctx.labels.video_id} --track {tid} --action 'begins to ...' --start S (or --ongoing / --none)")
    return ann
