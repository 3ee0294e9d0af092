"""Independent evidence about who speaks must agree before ASD or AVSM asks (issue 49's answer key).

ASD: L7 names one speaker and the voice's class (L10) equals that face's class (L3), both known; AVSM: the voice's
class matches one face and L7 hears exactly that person speak. Each family thus needs two signals that fail
differently to point at the same person.

The signals fail differently: L7 (Light-ASD under the time-shift test, lip-sync rivals) says which face follows
the sound; L10 says whether the voice is a man's, a woman's or a child's; L3 says the same of each face. Two voices
at once reach ASD as two L7 speakers (both faces pass the shift test): the offline audio detector of how many voices
are heard (core/audio/overlap.py) is not accurate enough to gate on (docs/audio.md). A question is made only where they agree; otherwise the candidate is rejected
with a reason that names the disagreement, so `task_candidates` tells a reviewer which signal objected."""

from __future__ import annotations

from collections.abc import Sequence

from hvbench_assets.core.speakers import rules as speaker_rules
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Person, Verdict, reject

def too_small(labels: ClipLabels, people: Sequence[Person], m: dict) -> Verdict | None:
    """None unless a person's every L7 row says its face is too small to judge (then nobody can say they are silent)."""
    rows = labels.by_track("speaker_scores")
    small = [p for p in people if p.track_ids and all((rows.get(t) or {}).get("status") == "too_small" for t in p.track_ids)]
    if not small:
        return None
    m["too_small"] = [list(p.track_ids) for p in small]
    reason = (rows.get(small[0].track_ids[0]) or {}).get("reason") or "face too small"
    return reject("face_size", f"{len(small)} person(s) too small to judge who speaks (L7: {reason})", m)


def vetoed(labels: ClipLabels, m: dict) -> Verdict | None:
    """When L7 heard a face speak but the voice and the face disagree (the veto), name that disagreement."""
    reasons = [f"track {r['track_id']}: {r['veto_reason']}" for r in labels.rows.get("speaker_scores") or []
               if r.get("raw_speaking") and r.get("veto_reason")]
    if not reasons:
        return None
    m["vetoed"] = reasons
    return reject("voice_face", "L7's speaker and the voice disagree: " + "; ".join(reasons), m)


def longest_track(labels: ClipLabels, person: Person) -> int:
    """The person's track with the most frames: whose L3 row speaks for the person."""
    frames = {t.track_id: t.n_frames for t in labels.tracks}
    return max(person.track_ids, key=lambda t: frames.get(t, 0))


def face_of(labels: ClipLabels, person: Person, child_below_years: float) -> speaker_rules.PersonClass | None:
    """L3's class of a person: the row of its longest track."""
    return speaker_rules.face_class(labels.by_track("demographics").get(longest_track(labels, person)), child_below_years)


def unconfirmed(labels: ClipLabels, person: Person, child_below_years: float, min_confidence: float) -> str | None:
    """Why the voice (L10) does not confirm a person as its speaker, or None: both classes known (the voice at
    `min_confidence`, the face `ok` in L3) and equal. A face L3 is unsure of confirms nothing: a mouthing face L7
    could not tell from a speaker is then not asked about."""
    row = labels.one("voice_demographics")
    voice = speaker_rules.voice_class(row)
    if voice is None or voice.confidence < min_confidence:
        what = f"{voice.label} ({voice.confidence:.2f})" if voice else f"unknown (L10 {(row or {}).get('status')})"
        return f"the voice's class is {what}, below {min_confidence:g}"
    face = face_of(labels, person, child_below_years)
    if face is None:
        status = (labels.by_track("demographics").get(longest_track(labels, person)) or {}).get("status") or "missing"
        return f"the voice is {voice.label} ({voice.confidence:.2f}) but the face's class is unknown (L3 {status})"
    if face.label != voice.label:
        return f"the voice is {voice.label} ({voice.confidence:.2f}) but the face is {face.label} ({face.confidence:.2f})"
    return None
