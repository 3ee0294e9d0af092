"""The six descriptive families (ER, ETA, EIC, H2T, BTA, BCA): their selection rules here, their questions
from the distractor-included synthesis chain (core/synthesis: caption -> question -> ensemble answers ->
weighted ranking -> perturbation -> option checks). Importing core/synthesis, a floor up, is the point of
this module: it plugs the chain into the task registry (the chain itself uses only core/tasks' drafts,
rules and reply parsing)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.chain import synthesize
from hvbench_assets.core.synthesis.recipe import Subject
from hvbench_assets.core.synthesis.replies import Stop
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending, stopped
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import (
    Option,
    Verdict,
    check_range,
    co_present,
    most_present,
    person_count,
    persons,
    reject,
)


@dataclass(frozen=True)
class DescriptiveParams:
    min_duration_s: float = 7.0  # ETA, BTA, BCA: strictly longer
    min_people: int = 3  # H2T
    max_people: int = 7
    min_sharing: int = 3  # EIC: strictly more tracks share the longest presence
    max_sharing: int = 7  # EIC: strictly fewer
    tolerance_frames: int = 0


def _target(labels: ClipLabels, rule: str, m: dict, why: str) -> Verdict:
    target = most_present(persons(labels))
    if target is None:
        return reject("people", "people=0: no face track (L1)", m)
    return Verdict(True, rule, why, m, target=list(target.track_ids), target_track_ids=target.track_ids)


def _with_face_description(v: Verdict, labels: ClipLabels) -> Verdict:
    """ER and ETA caption the target from its L5 face description: without one there is nothing to ask."""
    if not v.selected:
        return v
    l5 = labels.by_track("facial_description")
    if not any((l5.get(t) or {}).get("status") == "ok" and (l5.get(t) or {}).get("text") for t in v.target_track_ids):
        return reject("facial_description", f"no L5 facial description for the target track(s) "
                      f"{list(v.target_track_ids)}", v.measured)
    return v


def select_er(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _with_face_description(_target(labels, "er", {}, "the most-present person"), labels)


def _long_clip(labels: ClipLabels, p: DescriptiveParams, rule: str) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    return _target(labels, rule, m, "the most-present person of a clip longer than 7 s")


def select_eta(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _with_face_description(_long_clip(labels, p, "eta"), labels)


def select_bta(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _long_clip(labels, p, "bta")


def select_bca(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _long_clip(labels, p, "bca")


def select_eic(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    m: dict = {}
    sharing = co_present(labels, p, m)
    if isinstance(sharing, Verdict):
        return sharing
    ids = tuple(sorted(t.track_id for t in sharing))
    return Verdict(True, "eic", f"{len(sharing)} tracks share the longest presence", m, target=list(ids),
                   target_track_ids=ids)


def select_h2t(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "people", "people", person_count(labels), p.min_people, p.max_people):
        return v
    return _target(labels, "h2t", m, "the most-present person among 3-7 people")


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
