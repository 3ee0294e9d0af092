"""T2H, Text2Human: which numbered person a description fits. A clip where 4-6 tracks share the longest presence;
the target is drawn among those people from the clip's content hash, a model describes it ("The person is ..."),
and every person on screen gets a numbered box and is an option."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.family import FACE_GATE, PERSON, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.people import describe
from hvbench_assets.core.tasks.prompts import PERSON_DESCRIPTION
from hvbench_assets.core.tasks.rules import Option, Person, Verdict, co_present, persons


@dataclass(frozen=True)
class T2hParams:
    min_sharing: int = 3  # strictly more
    max_sharing: int = 7  # strictly fewer
    tolerance_frames: int = 0


def select_t2h(labels: ClipLabels, p: T2hParams) -> Verdict:
    m: dict = {}
    sharing = co_present(labels, p, m)
    if isinstance(sharing, Verdict):
        return sharing
    ids = {t.track_id for t in sharing}
    everyone = persons(labels)
    target = _pick([q for q in everyone if set(q.track_ids) & ids], labels.clip.sha256)
    m["people_boxed"] = len(everyone)
    # every person on screen gets a numbered box and is an option (the paper marks all individuals), not only
    # the co-present ones the target is drawn from
    return Verdict(True, "t2h", f"{len(sharing)} tracks share the longest presence", m, target=list(target.track_ids),
                   target_track_ids=target.track_ids, persons=tuple(everyone))


def _pick(people: list[Person], clip_sha: str) -> Person:
    """A target drawn from the clip's content hash: fixed for a clip, spread over positions across clips."""
    return people[int(clip_sha[:12] or "0", 16) % len(people)]


def build_t2h(ctx: BuildContext) -> Draft | Pending:
    described = describe(ctx)
    if isinstance(described, Pending):
        return described
    sentence, calls = described
    target = set(ctx.verdict.target_track_ids)
    people = ctx.verdict.persons
    match = next(q for q in people if set(q.track_ids) == target)
    return Draft(
        question=f"Please select the person in the video that best matches the following description: {sentence}",
        truth=Option("", "truth", person=match.index),
        distractors=[Option("", "rule", person=q.index) for q in people if q is not match],
        marking={"kind": "numbers"}, call_ids=calls, details={"description": sentence},
    )


FAMILY = TaskFamily(
    name="Text2Human", abbrev="T2H", category=PERSON, asset="text_to_human",
    labels=("human_tracks", "person_count", "appearance"), marking="numbers", face_gate=FACE_GATE,
    select=select_t2h, build=build_t2h, params=T2hParams(),
    version="2",  # 2: every person with a detected face is boxed, not only the co-present ones
    model_prompts=(PERSON_DESCRIPTION,),
    asks=Asks("the person a description fits", (asks.PERSON,)), answer_kind="person",
    truth="L1 target; a model describes it", answer_from="the L1 target track, described by a model",
    answer_labels=("human_tracks", "appearance"),
    evidence=Evidence("presence", "offered"),
    guideline="Find the person the text describes among the numbered boxes; exactly one must fit. Reject "
              "(ambiguous) if the text fits two people, or (bad track) if a number is on no one.",
)
