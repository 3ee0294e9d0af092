"""What the six descriptive families (ER, ETA, EIC, H2T, BTA, BCA) share: their parameters, the target their rules
pick, and their build: the subject from the labels, then the distractor-included synthesis chain (core/synthesis:
caption -> question -> ensemble answers -> weighted ranking -> perturbation -> option checks) with the family's
own recipe. Each family's rule and recipe are in its module under core/tasks/families/."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.chain import synthesize
from hvbench_assets.core.synthesis.recipe import Subject
from hvbench_assets.core.synthesis.replies import Stop
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending, stopped
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict, check_range, most_present, persons, reject


# where their truth comes from (docs/tasks.md, `hvbench explain`)
TRUTH = "ensemble: weighted scores pick one model answer; perturbed runners-up"
TRUTH_FROM = "the synthesis ensemble (synthesis_steps)"


@dataclass(frozen=True)
class DescriptiveParams:
    min_duration_s: float = 7.0  # ETA, BTA, BCA: strictly longer
    min_people: int = 3  # H2T
    max_people: int = 7
    min_sharing: int = 3  # EIC: strictly more tracks share the longest presence
    max_sharing: int = 7  # EIC: strictly fewer
    tolerance_frames: int = 0


def most_present_target(labels: ClipLabels, rule: str, m: dict, why: str) -> Verdict:
    target = most_present(persons(labels))
    if target is None:
        return reject("people", "people=0: no face track (L1)", m)
    return Verdict(True, rule, why, m, target=list(target.track_ids), target_track_ids=target.track_ids)


def with_face_description(v: Verdict, labels: ClipLabels) -> Verdict:
    """A family that captions the target from its L5 face description (ER, ETA): without one there is nothing
    to ask."""
    if not v.selected:
        return v
    l5 = labels.by_track("facial_description")
    if not any((l5.get(t) or {}).get("status") == "ok" and (l5.get(t) or {}).get("text") for t in v.target_track_ids):
        return reject("facial_description", f"no L5 facial description for the target track(s) "
                      f"{list(v.target_track_ids)}", v.measured)
    return v


def long_clip_target(labels: ClipLabels, p: DescriptiveParams, rule: str) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    return most_present_target(labels, rule, m, "the most-present person of a clip longer than 7 s")


def build(ctx: BuildContext) -> Draft | Pending:
    """A descriptive family's question: the subject from the labels (the red-boxed target, or the numbered people
    of a numbered family), then the synthesis chain with the family's recipe and what its question must ask."""
    if ctx.synthesis is None:
        return Pending("blocked", "the synthesis needs a writer and answering models (none given)", rule="model")
    family, labels, tids = ctx.family, ctx.labels, tuple(ctx.verdict.target_track_ids)
    if family.marking == "numbers":
        numbers = {t: ctx.numbers[t] for t in tids}  # the clip's person numbers (core/vision number_tracks)
        marking = {"kind": "numbers", "numbers": {str(t): n for t, n in numbers.items()}}
    else:
        numbers, marking = {}, {"kind": "red_box", "track_ids": sorted(tids)}
    appearance = " ".join((labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    facial = " ".join((labels.by_track("facial_description").get(t) or {}).get("text") or "" for t in tids
                      if (labels.by_track("facial_description").get(t) or {}).get("status") == "ok").strip()
    subject = Subject(marking, ctx.marked_video(marking), appearance or "not available", facial,
                      tuple(sorted(numbers.values())))
    log = StepLog()
    try:
        out = synthesize(family.synthesis, family.asks, ctx.synthesis, subject, log)
    except Stop as stop:
        return stopped(stop, log)
    return Draft(question=out.question, truth=Option(out.truth, "truth"),
                 distractors=[Option(d, "perturbation") for d in out.distractors], marking=marking,
                 call_ids=log.call_ids, details=out.details, rule_params=out.rule_params, steps=log.steps)
