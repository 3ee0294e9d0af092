"""ATD, Appearance Time Detection: during which seconds a described person is on screen. A clip longer than 7 s
and a person present for 1/3 to 2/3 of it in one stretch; a model describes them ("The person is ..."), the truth
is their L1 time range and the distractors ranges overlapping it by at most 4 s."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.family import PERSON, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.people import describe
from hvbench_assets.core.tasks.prompts import PERSON_DESCRIPTION
from hvbench_assets.core.tasks.rules import Option, Verdict, check_range, integer_range, overlap, persons, presence, reject


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


def build_atd(ctx: BuildContext) -> Draft | Pending:
    described = describe(ctx)
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


FAMILY = TaskFamily(
    name="Appearance_Time_Detection", abbrev="ATD", category=PERSON, asset="appearance_time_detection",
    labels=("human_tracks", "appearance"), ours=("person_count",),
    why_ours="a target whose tracks L2 merged appears in several stretches and is rejected", marking="none",
    select=select_atd, build=build_atd, params=AtdParams(), model_prompts=(PERSON_DESCRIPTION,),
    asks=Asks("when the person is on screen", (asks.TIME,)), answer_kind="time_span",
    truth="L1 time range; a model describes the person", answer_from="the target's L1 presence range",
    answer_labels=("human_tracks",),
    evidence=Evidence("answer_range", "answer"),
    guideline="The described person must be findable, and the right interval covers when they are on screen "
              "(to the second). Reject if the description fits someone else too.",
)
