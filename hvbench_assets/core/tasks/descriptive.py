"""Selection rules of the six descriptive families (ER, ETA, EIC, H2T, BTA, BCA). Their questions come
from the distractor-included synthesis chain (caption -> ensemble answers -> ranking -> perturbation),
which is a stage of its own; here a selected clip is recorded as `pending_synthesis`."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.tasks.base import BuildContext, Pending
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import (
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


def select_er(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _target(labels, "er", {}, "the most-present person")


def _long_clip(labels: ClipLabels, p: DescriptiveParams, rule: str) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    return _target(labels, rule, m, "the most-present person of a clip longer than 7 s")


def select_eta(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return _long_clip(labels, p, "eta")


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


def build_pending_synthesis(ctx: BuildContext) -> Pending:
    return Pending("pending_synthesis", "selected; the question is written by the synthesis stage "
                   "(caption, ensemble answers, ranking, perturbation), which is not built yet")
