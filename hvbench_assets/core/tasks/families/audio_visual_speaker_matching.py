"""AVSM, Audio-Visual Speaker Matching: whose voice is heard. 2-4 people with speech over at least 4 s; the voice's
class (L10 sex and age group) must equal the face class (L3) of exactly one person covering more than 67 % of the
frames, and L7 must hear exactly that person speak (an off-screen voice matches no one)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.speakers import rules as speaker_rules
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import agreement, asks
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.family import FACE_GATE, SPEECH, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict, persons, presence, reject, speaking_persons, talking_group


@dataclass(frozen=True)
class AvsmParams:
    min_people: int = 2
    max_people: int = 4
    min_duration_s: float = 4.0
    min_coverage: float = 0.67  # strictly more than this share of frames
    child_below_years: float = 13.0


def select_avsm(labels: ClipLabels, p: AvsmParams) -> Verdict:
    m: dict = {}
    if v := talking_group(labels, p, m):
        return v
    voice = speaker_rules.voice_class(labels.one("voice_demographics"))
    m["voice_class"] = voice.label if voice else None
    if voice is None:
        row = labels.one("voice_demographics") or {}
        return reject("voice_class", f"voice class unknown (L10 {row.get('status')}: {row.get('reason') or ''})".strip(), m)
    people = persons(labels)
    frames = labels.frame_count
    candidates = [q for q in people if presence(q, frames) > p.min_coverage]
    m["coverage"] = [round(presence(q, frames), 3) for q in people]
    if len(candidates) < p.min_people:
        return reject("coverage", f"persons covering >{p.min_coverage:.0%} of frames={len(candidates)} < {p.min_people}", m)
    demo = labels.by_track("demographics")
    classes = {}
    for q in people:
        longest = agreement.longest_track(labels, q)
        cls = speaker_rules.face_class(demo.get(longest), p.child_below_years)
        classes[q.index] = cls.label if cls else None
    m["face_classes"] = [classes[q.index] for q in people]
    # an unsure face (L3 low_confidence) whose lean is not the voice's class does not block: the match is then
    # confirmed by L7 below, which must hear exactly the matched person speak; one that leans to it, or none, blocks
    leans = {q.index: _lean(demo.get(agreement.longest_track(labels, q)), p.child_below_years)
             for q in candidates if classes[q.index] is None}
    unknown = [i for i, lean in leans.items() if lean in (None, voice.label)]
    if unknown:
        statuses = sorted({(demo.get(t) or {}).get("status") or "missing" for q in candidates for t in q.track_ids})
        return reject("face_class", f"face class unknown for {len(unknown)} person(s) (L3 {', '.join(statuses)})", m)
    if leans:
        m["unsure_faces"] = {str(i): lean for i, lean in leans.items()}
    matches = [q for q in people if classes[q.index] == voice.label]
    m["matches"] = len(matches)
    if len(matches) != 1:
        return reject("one_match", f"persons whose face class is {voice.label}={len(matches)}, need exactly 1", m)
    if matches[0] not in candidates:
        return reject("coverage", "the matching person covers too few frames", m)
    t = matches[0]
    # the voice must be that person's on screen: L7 hears exactly them speak (an off-screen voice or a second
    # talker would make the match a guess)
    speakers = speaking_persons(labels, people)
    m["speaking_persons"] = [list(s.track_ids) for s in speakers]
    if not speakers:
        return reject("visible_speaker", f"the voice ({voice.label}) matches tracks {list(t.track_ids)}, but L7 sees "
                      "no one speak: the voice may come from off screen", m)
    if [s.track_ids for s in speakers] != [t.track_ids]:
        return reject("speaker_agrees", f"the voice ({voice.label}) matches tracks {list(t.track_ids)}, but L7's "
                      f"speakers are {[list(s.track_ids) for s in speakers]}", m)
    return Verdict(True, "avsm", f"the voice ({voice.label}) matches exactly one person, the one L7 hears speak", m,
                   target=list(t.track_ids), target_track_ids=t.track_ids, persons=tuple(candidates))


def _lean(row: dict | None, child_below_years: float) -> str | None:
    """The class an unsure (low_confidence) L3 row leans to, or None."""
    if not row or row.get("status") != "low_confidence":
        return None
    cls = speaker_rules.face_class({**row, "status": "ok"}, child_below_years)
    return cls.label if cls else None


def build_avsm(ctx: BuildContext) -> Draft | Pending:
    people, target = ctx.verdict.persons, set(ctx.verdict.target_track_ids)
    match = next(p for p in people if set(p.track_ids) == target)
    return Draft(
        question="Whose voice is heard in this video? Every person is marked by a box with a number.",
        truth=Option("", "truth", person=match.index),
        distractors=[Option("", "rule", person=p.index) for p in people if p is not match],
        marking={"kind": "numbers"},
    )


FAMILY = TaskFamily(
    name="Audio_Visual_Speaker_Matching", abbrev="AVSM", category=SPEECH, asset="audio_visual_speaker_matching",
    labels=("human_tracks", "person_count", "demographics", "audio_tags", "voice_demographics"),
    ours=("speaker_scores",),
    why_ours="the voice must be the one L7 hears from the matched face: an off-screen voice matches no one",
    marking="numbers", face_gate=FACE_GATE,
    select=select_avsm, build=build_avsm, params=AvsmParams(), version="2",
    asks=Asks("the person whose voice is heard", (asks.PERSON, asks.SPEECH)), answer_kind="person",
    truth="L10 voice class = one L3 face class = the L7 speaker",
    answer_from="the person whose L3 face class equals the L10 voice class and whom L7 alone hears speak",
    answer_labels=("voice_demographics", "demographics", "speaker_scores"),
    evidence=Evidence("speaking", "offered"),
    guideline="Listen to the voice and look at the numbered people: the right option is the one whose apparent "
              "sex and age match the voice. Reject if two people match equally.",
)
