"""Rules shared by several task families: verdicts, people and their presence, speech, option placement.

Every check returns a `Verdict`; a rejection names the rule and the measured value that failed
(`people=5 not in 2..4`), so `task_candidates` says why a clip made no question.
"""

from __future__ import annotations

import math
import random
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.vision.tables import Track


@dataclass(frozen=True)
class Verdict:
    selected: bool
    rule: str
    reason: str
    measured: dict[str, Any] = field(default_factory=dict)
    target: Any = None  # what the question is about (goes into the question id)
    target_track_ids: tuple[int, ...] = ()
    persons: tuple[Person, ...] = ()  # people offered as options (numbered tasks), in a fixed order


def reject(rule: str, reason: str, measured: Mapping[str, Any]) -> Verdict:
    return Verdict(False, rule, reason, dict(measured))


def check_range(measured: dict, rule: str, name: str, value: float, lo: float | None = None, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False, unit: str = "") -> Verdict | None:
    """None when lo <= value <= hi (open ends exclusive), else the rejection naming the value."""
    measured[name] = round(value, 3) if isinstance(value, float) else value
    ok_lo = lo is None or (value > lo if lo_open else value >= lo)
    ok_hi = hi is None or (value < hi if hi_open else value <= hi)
    if ok_lo and ok_hi:
        return None
    if lo is not None and hi is not None:
        want = f"{'(' if lo_open else ''}{_fmt(lo)}..{_fmt(hi)}{')' if hi_open else ''}"
        return reject(rule, f"{name}={_fmt(value)}{unit} not in {want}{unit}", measured)
    if lo is not None:
        return reject(rule, f"{name}={_fmt(value)}{unit} {'<=' if lo_open else '<'} {_fmt(lo)}{unit}", measured)
    return reject(rule, f"{name}={_fmt(value)}{unit} {'>=' if hi_open else '>'} {_fmt(hi)}{unit}", measured)


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}".rstrip("0")


# -- people ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Person:
    """One L2 identity: the L1 tracks merged into it, and how many clip frames they cover."""

    index: int
    track_ids: tuple[int, ...]
    frames: int
    first_frame: int
    centre_x: float  # face centre at the first frame (left-to-right order)


def persons(labels: ClipLabels) -> list[Person]:
    """L2's persons over L1's tracks (a track L2 does not list is a person of its own), left to right."""
    tracks = {t.track_id: t for t in labels.tracks}
    groups = [list(g) for g in ((labels.one("person_count") or {}).get("persons") or [])]
    listed = {tid for g in groups for tid in g}
    groups += [[tid] for tid in tracks if tid not in listed]
    out = []
    for g in groups:
        ts = [tracks[t] for t in g if t in tracks]
        if not ts:
            continue
        first = min(ts, key=lambda t: t.first_frame)
        box = first.boxes[0].face if first.boxes else (0.0, 0.0, 0.0, 0.0)
        out.append((tuple(sorted(t.track_id for t in ts)), sum(t.n_frames for t in ts), first.first_frame,
                    (box[0] + box[2]) / 2))
    out.sort(key=lambda p: (p[3], p[2], p[0]))
    return [Person(i, tids, frames, ff, cx) for i, (tids, frames, ff, cx) in enumerate(out)]


def person_count(labels: ClipLabels) -> int:
    row = labels.one("person_count") or {}
    return int(row.get("person_count") or 0) if row.get("status") == "ok" else 0


def presence(person: Person | Track, frame_count: int) -> float:
    frames = person.frames if isinstance(person, Person) else person.n_frames
    return frames / frame_count if frame_count else 0.0


def most_present(people: Sequence[Person]) -> Person | None:
    """The person seen in the most frames (ties: leftmost)."""
    return max(people, key=lambda p: (p.frames, -p.index)) if people else None


def sharing_longest(tracks: Sequence[Track], tolerance_frames: int = 0) -> list[Track]:
    """Tracks whose frame count reaches the longest track's (within `tolerance_frames`)."""
    if not tracks:
        return []
    longest = max(t.n_frames for t in tracks)
    return [t for t in tracks if t.n_frames >= longest - tolerance_frames]


def co_present(labels: ClipLabels, p, m: dict) -> list[Track] | Verdict:
    """The EIC/T2H clip rule: more than `min_sharing` and fewer than `max_sharing` tracks reach the longest
    track's frame count. Returns those tracks, or the rejection."""
    sharing = sharing_longest(labels.tracks, p.tolerance_frames)
    v = check_range(m, "tracks_sharing_longest", "tracks sharing the longest presence", len(sharing),
                    p.min_sharing, p.max_sharing, lo_open=True, hi_open=True)
    return v or sharing


# -- sound -------------------------------------------------------------------------------------
def speech_verdict(labels: ClipLabels, rule: str, measured: dict) -> Verdict | None:
    """None when L6 says the clip holds speech (not music or singing), else the rejection."""
    row = labels.one("audio_tags") or {}
    measured["sound"] = row.get("sound_type") or row.get("status")
    if row.get("status") != "ok" or not row.get("is_speech"):
        return reject(rule, f"sound={row.get('sound_type') or row.get('status')}: no speech (L6)", measured)
    if row.get("is_music"):
        return reject(rule, "sound=speech over music/singing (L6): not plain speech", measured)
    return None


def speaking_persons(labels: ClipLabels, people: Sequence[Person]) -> list[Person]:
    """Persons with at least one L7 track flagged speaking: several speaking tracks of one L2 person
    count once."""
    speaking = {r["track_id"] for r in labels.rows.get("speaker_scores") or []
                if r.get("track_id") is not None and r.get("speaking")}
    return [p for p in people if speaking & set(p.track_ids)]


# why a family reads L1 beyond Table 9 when its rule counts speakers as people (AVAD, SCM)
SPEAKERS_AS_PEOPLE = "L7 speaking tracks are counted as people through L1 tracks merged by L2"


def talking_group(labels: ClipLabels, p, m: dict) -> Verdict | None:
    """The clip gate ASD and AVSM share: at least `min_duration_s`, `min_people`..`max_people` (L2), speech (L6)."""
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, unit="s"):
        return v
    if v := check_range(m, "people", "people", person_count(labels), p.min_people, p.max_people):
        return v
    return speech_verdict(labels, "speech", m)


# -- time ----------------------------------------------------------------------------------------
def integer_range(first_s: float, end_s: float) -> tuple[int, int]:
    """A presence interval as whole seconds: start rounded down, end rounded up (it covers the stretch)."""
    return int(math.floor(first_s + 1e-6)), int(math.ceil(end_s - 1e-6))


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


# -- options -------------------------------------------------------------------------------------
LETTERS = string.ascii_uppercase


def seeded_position(n_options: int, rng: random.Random) -> int:
    """Where the right answer goes in the stored question: drawn from the question's own generator (seeded by
    its id), never from other questions, so a rerun on the same inputs stores the same order. The benchmark
    balances the letters when it is assembled (core/benchmark/letters.py)."""
    return rng.randrange(n_options)


@dataclass(frozen=True)
class Option:
    text: str
    origin: str  # truth | rule | model | fixed
    person: int | None = None  # a person option: its text is written once its number is known


_NAMED = re.compile(r"^(?:Person (\d+)\b|(\d+)\s*-)")


def named_number(text: str | None) -> int | None:
    """The person number an option of a numbered question names: "Person 2" (ASD, AVSM, T2H) or "2-happy" (EIC)."""
    m = _NAMED.match(text or "")
    return int(m.group(1) or m.group(2)) if m else None


def assemble(truth: Option, distractors: Sequence[Option], position: int, rng: random.Random,
             person_numbers: Mapping[int, int] | None = None, person_text: str = "Person {number}") -> list[dict]:
    """Options with the truth at `position` and the distractors in a seeded order. A person option is named
    by the person's number on the clip (`person_numbers`: person index -> number, see core/vision
    `number_tracks`), which is also the number drawn on that person's box; the option letter A, B, ... it
    sits at is another thing."""
    rest = list(distractors)
    rng.shuffle(rest)
    ordered = rest[:position] + [truth] + rest[position:]
    options = []
    for i, opt in enumerate(ordered):
        text = opt.text
        if opt.person is not None:
            text = person_text.format(number=(person_numbers or {})[opt.person])
        options.append({"letter": LETTERS[i], "text": text, "origin": opt.origin})
    return options
