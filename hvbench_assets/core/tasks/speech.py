"""Speech-visual alignment families built from labels alone: ASD, AVAD, AVSM (appendix L.2)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.speakers import rules as speaker_rules
from hvbench_assets.core.tasks import agreement
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import (
    Option,
    Verdict,
    check_range,
    person_count,
    persons,
    presence,
    reject,
    speaking_persons,
    speech_verdict,
)

MORE_THAN_ONE = "There is more than one active speaker in the video."
NO_SPEAKER = "There is no active speaker in the video."


def talking_group(labels: ClipLabels, p, m: dict) -> Verdict | None:
    """The clip gate ASD and AVSM share: at least `min_duration_s`, `min_people`..`max_people` (L2), speech (L6)."""
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, unit="s"):
        return v
    if v := check_range(m, "people", "people", person_count(labels), p.min_people, p.max_people):
        return v
    return speech_verdict(labels, "speech", m)


# -- ASD: who speaks -----------------------------------------------------------------------------
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


# -- AVAD: from when do sound and picture match ---------------------------------------------------
@dataclass(frozen=True)
class AvadParams:
    max_people: int = 2  # fewer than 3
    min_duration_s: float = 8.0  # strictly longer


def select_avad(labels: ClipLabels, p: AvadParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    if v := check_range(m, "people", "people", person_count(labels), hi=p.max_people):
        return v
    if v := speech_verdict(labels, "speech", m):
        return v
    speakers = speaking_persons(labels, persons(labels))
    m["speaking_persons"] = [list(s.track_ids) for s in speakers]
    if not speakers:
        return reject("speaker", "speaking persons=0 (L7), need at least 1", m)
    return Verdict(True, "avad", "speech with a visible speaker", m, target=None)


def segment_starts(duration_s: float) -> list[int]:
    """Left ends of three equal segments, rounded to whole seconds."""
    return [int(round(duration_s * k / 3)) for k in range(3)]


def build_avad(ctx: BuildContext) -> Draft:
    starts = segment_starts(ctx.labels.clip.duration_s)
    cut = ctx.rng.choice(starts)
    return Draft(
        question=("The sound of this video is played backwards from the start up to some moment; after it, sound "
                  "and picture belong together. From which second on are sound and picture aligned?"),
        truth=Option(f"From second {cut}", "truth"),
        distractors=[Option(f"From second {s}", "rule") for s in starts if s != cut],
        marking={"kind": "reversed_audio", "cut_s": cut},
        details={"segment_starts": starts, "cut_s": cut},
    )


# -- AVSM: whose voice is it -----------------------------------------------------------------------
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
