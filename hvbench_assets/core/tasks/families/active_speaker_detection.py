"""ASD, Active Speaker Detection: which numbered person speaks. 2-4 people with speech over at least 4 s, exactly
one L7 speaker, every face large enough to judge, and the voice's class (L10) equal to that face's (L3); every
person is an option, with "more than one" and "no" active speaker as fixed ones."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import agreement, asks
from hvbench_assets.core.tasks.base import BuildContext, Draft
from hvbench_assets.core.tasks.family import SPEECH, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict, persons, reject, speaking_persons, talking_group

MORE_THAN_ONE = "There is more than one active speaker in the video."
NO_SPEAKER = "There is no active speaker in the video."


@dataclass(frozen=True)
class AsdParams:
    min_people: int = 2
    max_people: int = 4
    min_duration_s: float = 4.0
    child_below_years: float = 13.0
    min_voice_confidence: float = 0.7  # L10's class probability that counts as knowing the voice (L7's veto bar)


def select_asd(labels: ClipLabels, p: AsdParams) -> Verdict:
    """One speaker among 2-4 people, and the evidence agrees: every face large enough to judge, exactly one L7 speaker
    (two people talking at once are two), and the voice's class (L10) equals that face's class (L3)."""
    m: dict = {}
    if v := talking_group(labels, p, m):
        return v
    people = persons(labels)
    if v := agreement.too_small(labels, people, m):
        return v
    speakers = speaking_persons(labels, people)
    m["speaking_persons"] = [list(s.track_ids) for s in speakers]
    if not speakers and (v := agreement.vetoed(labels, m)):
        return v
    if len(speakers) != 1:
        return reject("one_speaker", f"speaking persons={len(speakers)} (L7), need exactly 1"
                      + (": more than one person talks" if len(speakers) > 1 else ""), m)
    s = speakers[0]
    if d := agreement.unconfirmed(labels, s, p.child_below_years, p.min_voice_confidence):
        return reject("voice_face", f"L7's speaker (tracks {list(s.track_ids)}) is not confirmed by the voice: {d}", m)
    return Verdict(True, "asd", "one speaker among 2-4 people with speech, the voice's class matching the face's", m,
                   target=list(s.track_ids), target_track_ids=s.track_ids, persons=tuple(people))


def build_asd(ctx: BuildContext) -> Draft:
    people, target = ctx.verdict.persons, set(ctx.verdict.target_track_ids)
    speaker = next(p for p in people if set(p.track_ids) == target)
    others = [Option("", "rule", person=p.index) for p in people if p is not speaker]
    return Draft(
        question="Who is the active speaker in this video? Every person is marked by a box with a number.",
        truth=Option("", "truth", person=speaker.index),
        distractors=others + [Option(MORE_THAN_ONE, "fixed"), Option(NO_SPEAKER, "fixed")],
        marking={"kind": "numbers"},
    )


FAMILY = TaskFamily(
    name="Active_Speaker_Detection", abbrev="ASD", category=SPEECH, asset="active_speaker_detection",
    labels=("human_tracks", "person_count", "audio_tags", "speaker_scores"),
    ours=("voice_demographics", "demographics"),
    why_ours="L7's speaker is asked about only where the voice's class (L10) equals the face's (L3)",
    marking="numbers",
    select=select_asd, build=build_asd, params=AsdParams(), version="2",
    asks=Asks("the person who speaks", (asks.PERSON, asks.SPEECH)), answer_kind="person",
    truth="L7 single speaking person whose L3 face class equals the L10 voice class",
    answer_from="the one person whose L7 speaker_scores row says speaking", answer_labels=("speaker_scores",),
    evidence=Evidence("speaking", "offered"),
    guideline="Find who is speaking in the stretch asked about: lips moving in time with the voice. Reject if "
              "the speaker is off screen or two people talk at once.",
)
