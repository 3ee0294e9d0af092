"""BTA, Behavior Temporal Analysis: the red-boxed person's actions in order. A clip longer than 7 s and its
most-present person; the writer says on the red-box video whether the actions change (no change rejects the clip)
and lists them, then asks about the sequence. AST reads that action list (`action_list`) for its distractors."""

from __future__ import annotations

import json

from hvbench_assets.core.synthesis import forms
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.prompts import (
    answer_prompt,
    caption_prompt,
    flag_reply,
    perturb_prompt,
    question_prompt,
)
from hvbench_assets.core.synthesis.recipe import FlaggedCaption, Recipe, WriterQuestion
from hvbench_assets.core.tasks import asks, descriptive
from hvbench_assets.core.tasks.descriptive import DescriptiveParams
from hvbench_assets.core.tasks.family import BEHAVIOR, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict


def select_bta(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return descriptive.long_clip_target(labels, p, "bta")


CAPTION = caption_prompt(
    "bta", "Watch the person inside the red box (appearance notes: {appearance}). Do this person's actions change "
    "over the video, and which actions do they perform, in order?"
    + flag_reply("action_change", "action_sequence", "the actions in order, in one sentence"))
QUESTION = question_prompt(
    "bta", "The actions of one person in a video, in order: {caption}\nThe person: {appearance}",
    "asking which actions this person performs, in order, referring to the person only by appearance, and its "
    "answer: one short sentence listing the actions in order. The question must not name or hint at any of the "
    "actions.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option is an action sequence: at least two actions."""
    return Form("an action sequence", forms.action_sequence)


def action_list(steps: list[dict]) -> tuple[str, ...]:
    """The action list of a clip's BTA synthesis (its ok caption's action sequence, split into actions); ()
    when BTA has not run, was rejected before its caption, or found no change of action."""
    for s in reversed(steps):
        payload = s.get("payload") or {}
        if isinstance(payload, str):
            payload = json.loads(payload)
        parsed = payload.get("parsed") if s.get("step") == "caption" and s.get("status") == "ok" else None
        if isinstance(parsed, dict) and parsed.get("action_sequence"):
            return tuple(a.rstrip(".") for a in forms.actions(parsed["action_sequence"]))
    return ()


FAMILY = TaskFamily(
    name="Behavior_Temporal_Analysis", abbrev="BTA", category=BEHAVIOR, asset="behavior_temporal_analysis",
    labels=("human_tracks", "appearance"), marking="red_box",
    select=select_bta, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(FlaggedCaption(CAPTION, ("action_change", "action_sequence"), "action_change"),
                     WriterQuestion(QUESTION), answer_prompt("bta", ""),
                     perturb_prompt("bta", "add an action that does not happen, leave one out, swap the order of two, "
                                    "or replace one with a wrong one"), answer_form),
    records_steps=True,
    asks=Asks("the person's actions in order", (asks.ACTION, asks.ORDER), (asks.ASKS_TIME, asks.COUNT, asks.ASKS_EMOTION)),
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM,
    evidence=Evidence("presence", "answer"),
    guideline="Watch the boxed person's actions in order: the right option lists what they do in the order "
              "they do it. Distractors swap the order or add an action that never happens.",
    paper_no_edit=0.68,
)
