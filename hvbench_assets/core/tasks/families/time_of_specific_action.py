"""TSA, Time of Specific Action: at which second the red-boxed person starts an action. The truth is a human's
action-time annotation (`hvbench annotate action`); the distractors are whole seconds at least 3 s away from it
and "ongoing" (an action already happening when the clip begins is asked with fixed seconds instead)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.actions import ActionParams, annotation_of, select_target
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.family import BEHAVIOR, Annotation, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict

ONGOING = "This is an ongoing action in the video."
ONGOING_TIMES = (1, 4, 7, 10)


def select_tsa(labels: ClipLabels, p: ActionParams) -> Verdict:
    return select_target(labels, p, "tsa")


def time_distractors(truth_s: int, duration_s: float, min_gap: int, rng) -> list[int]:
    pool = [s for s in range(0, int(duration_s) + 1) if abs(s - truth_s) >= min_gap]
    if len(pool) < 3:
        raise ValueError(f"only {len(pool)} whole seconds lie >= {min_gap}s from {truth_s}s in a {duration_s:.1f}s clip")
    return rng.sample(pool, 3)


def build_tsa(ctx: BuildContext) -> Draft | Pending:
    ann = annotation_of(ctx)
    if isinstance(ann, Pending):
        return ann
    value, ids = ann["value"], [ann["annotation_id"]]
    red = {"kind": "red_box", "track_ids": list(ctx.verdict.target_track_ids)}
    if value.get("none"):
        return Pending("rejected", "the annotator saw no distinct action of the target", annotation_ids=ids, rule="action")
    if value.get("ongoing"):
        return Draft(
            question=f"When does the person in the red box start {value.get('action') or 'the action they are doing'}?",
            truth=Option(ONGOING, "truth"), distractors=[Option(f"At {s} s", "fixed") for s in ONGOING_TIMES],
            marking=red, annotation_ids=ids, details={"ongoing": True},
        )
    start = int(value["start_s"])
    try:
        others = time_distractors(start, ctx.labels.clip.duration_s, ctx.params.min_gap_s, ctx.rng)
    except ValueError as exc:
        return Pending("rejected", str(exc), annotation_ids=ids, rule="time_distractors")
    action = value["action"].strip().rstrip(".")
    return Draft(
        question=f"At which second does the person in the red box do this: \"{action}\"?",
        truth=Option(f"At {start} s", "truth"),
        distractors=[Option(f"At {s} s", "rule") for s in others] + [Option(ONGOING, "fixed")],
        marking=red, annotation_ids=ids, details={"action": action, "start_s": start, "distractor_s": others},
    )


def agreement(value: Mapping[str, Any]) -> tuple:
    """Two annotators agree on the start second (the action's wording may differ)."""
    return ("start", value.get("start_s"))


FAMILY = TaskFamily(
    name="Time_of_Specific_Action", abbrev="TSA", category=BEHAVIOR, asset="time_of_specific_action",
    labels=("human_tracks",), ours=("person_count",), why_ours="the most-present person is an L2 identity",
    marking="red_box",
    select=select_tsa, build=build_tsa, params=ActionParams(),
    asks=Asks("the second an action starts", (asks.TIME,)), answer_kind="time",
    truth="human action-time pair", answer_from="a human action-time pair (annotations)",
    annotation=Annotation("action", agreement),
    evidence=Evidence("action_time", "answer"),
    guideline="Find when the boxed person starts the named action: the right option is that second. Annotate "
              "the start (t), and mark 'ongoing' if it is already happening when the clip begins.",
)
