"""Person-recognition families: HC (human count), ATD (appearance time), T2H (text to human)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import PERSON_DESCRIPTION
from hvbench_assets.core.synthesis.replies import BadReply, person_sentence
from hvbench_assets.core.tasks.rules import (
    Option,
    Person,
    Verdict,
    check_range,
    co_present,
    integer_range,
    overlap,
    person_count,
    persons,
    presence,
    reject,
)


# -- HC: how many people -------------------------------------------------------------------------
@dataclass(frozen=True)
class HcParams:
    min_people: int = 3
    spread: int = 4  # distractors within +-spread of the true count, never below 1


def stratum(n: int) -> str:
    return "3-5" if n <= 5 else "6-8" if n <= 8 else "9+"


def select_hc(labels: ClipLabels, p: HcParams) -> Verdict:
    m: dict = {}
    n = person_count(labels)
    if v := check_range(m, "people", "people", n, lo=p.min_people):
        return v
    m["stratum"] = stratum(n)
    return Verdict(True, "hc", f"L2 estimates {n} people (stratum {m['stratum']}); the count is a human's", m)


def count_distractors(truth: int, spread: int, rng) -> list[int]:
    pool = [k for k in range(max(1, truth - spread), truth + spread + 1) if k != truth]
    return rng.sample(pool, 3)


def build_hc(ctx: BuildContext) -> Draft | Pending:
    ann = ctx.annotation
    if ann is None:
        return Pending("awaiting_annotation", f"needs a human count: hvbench annotate count {ctx.labels.video_id} N")
    truth = int(ann["value"]["count"])
    if truth < 1:
        return Pending("rejected", f"annotated count {truth}: no person to count", annotation_ids=[ann["annotation_id"]])
    return Draft(
        question="How many different people appear in this video?",
        truth=Option(str(truth), "truth"),
        distractors=[Option(str(k), "rule") for k in count_distractors(truth, ctx.params.spread, ctx.rng)],
        marking={"kind": "none"}, annotation_ids=[ann["annotation_id"]],
        details={"annotated_count": truth, "l2_estimate": person_count(ctx.labels)},
    )


# -- ATD: when does the person appear ----------------------------------------------------------------
@dataclass(frozen=True)
class AtdParams:
    min_duration_s: float = 7.0  # strictly longer
    min_presence: float = 1 / 3
    max_presence: float = 2 / 3
    max_overlap_s: float = 4.0


def select_atd(labels: ClipLabels, p: AtdParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    frames = labels.frame_count
    people = persons(labels)
    m["presence"] = [round(presence(q, frames), 3) for q in people]
    fitting = [q for q in people if p.min_presence - 1e-9 <= presence(q, frames) <= p.max_presence + 1e-9]
    if not fitting:
        return reject("presence", f"no person present for 1/3..2/3 of the frames (presence={m['presence']})", m)
    target = max(fitting, key=lambda q: (q.frames, -q.index))
    if len(target.track_ids) > 1:
        return reject("one_stretch", f"the target appears in {len(target.track_ids)} separate tracks (L2 merged)", m)
    return Verdict(True, "atd", "a person present for 1/3..2/3 of the clip", m, target=list(target.track_ids),
                   target_track_ids=target.track_ids)


def distractor_ranges(truth: tuple[int, int], duration_s: float, max_overlap_s: float, rng) -> list[tuple[int, int]]:
    """Three integer ranges inside the clip, each overlapping the truth by at most `max_overlap_s`;
    ranges of a length like the truth's are preferred."""
    end = max(1, int(round(duration_s)))
    length = truth[1] - truth[0]
    valid = [(a, b) for a in range(0, end) for b in range(a + 1, end + 1)
             if (a, b) != truth and overlap((a, b), truth) <= max_overlap_s]
    similar = [r for r in valid if abs((r[1] - r[0]) - length) <= max(2, length // 2)]
    pool = similar if len(similar) >= 3 else valid
    if len(pool) < 3:
        raise ValueError(f"only {len(pool)} ranges overlap {truth} by <= {max_overlap_s}s in a {duration_s:.1f}s clip")
    return rng.sample(pool, 3)


def _describe(ctx: BuildContext) -> tuple[str, list[str]] | Pending:
    """"The person is ..." from a describer looking at the red-box video of the target."""
    tids = tuple(ctx.verdict.target_track_ids)
    appearance = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    video = ctx.red_box_video(tids)
    answer = ctx.ask(PERSON_DESCRIPTION, video=video, appearance=appearance or "none")
    if not answer.ok:
        return Pending("failed", f"describer call failed: {answer.error}", call_ids=[answer.call_id])
    try:
        return person_sentence(answer.text), [answer.call_id]
    except BadReply as exc:
        return Pending("failed", f"describer reply unusable: {exc}", call_ids=[answer.call_id])


def build_atd(ctx: BuildContext) -> Draft | Pending:
    described = _describe(ctx)
    if isinstance(described, Pending):
        return described
    sentence, calls = described
    track = next(t for t in ctx.labels.tracks if t.track_id == ctx.verdict.target_track_ids[0])
    truth = integer_range(track.first_s, track.last_s + 1 / track.fps)
    try:
        others = distractor_ranges(truth, ctx.labels.clip.duration_s, ctx.params.max_overlap_s, ctx.rng)
    except ValueError as exc:
        return Pending("rejected", str(exc), call_ids=calls, rule="distractor_ranges")
    return Draft(
        question=f"{sentence} During which part of the video (in seconds) does this person appear?",
        truth=Option(_range_text(truth), "truth"),
        distractors=[Option(_range_text(r), "rule") for r in others],
        marking={"kind": "none"}, call_ids=calls,
        details={"description": sentence, "truth_range": list(truth), "distractor_ranges": [list(r) for r in others]},
    )


def _range_text(r: tuple[int, int]) -> str:
    return f"From {r[0]} s to {r[1]} s"


# -- T2H: which person fits the description ----------------------------------------------------------
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
    described = _describe(ctx)
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
