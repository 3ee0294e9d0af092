"""BCA, Behavior Causality Analysis: why the red-boxed person acts, or what their action leads to. A clip longer
than 7 s and its most-present person; the writer says on the red-box video whether there is a cause and effect
(none rejects the clip), then asks for one side. A causal question names the other side by design, so it may hold
up to half of the answer's key words."""

from __future__ import annotations

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


def select_bca(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return descriptive.long_clip_target(labels, p, "bca")


CAPTION = caption_prompt(
    "bca", "Watch the person inside the red box (appearance notes: {appearance}). Is there a cause and effect "
    "involving this person: something that makes them act or react, or something they do that brings about an "
    "event? If there is none, say so."
    + flag_reply("causal_events_exist", "causal_events_description",
                 "the cause and its effect in one or two sentences, or an empty string"))
QUESTION = question_prompt(
    "bca", "A cause and effect involving one person in a video: {caption}\nThe person: {appearance}",
    "that asks either why the person does something (the answer is the cause) or what something the person does "
    "leads to (the answer is the effect), referring to the person by appearance, and its answer in one short "
    "sentence. The question must not state its answer.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option is a statement about events (not a question); when the truth joins cause and effect, every
    option does."""
    return Form("a cause or effect statement", forms.statement, kind=forms.causal_kind)


FAMILY = TaskFamily(
    name="Behavior_Causualty_Analysis", abbrev="BCA", category=BEHAVIOR,  # sic: the published file name
    asset="behavior_causality_analysis", labels=("human_tracks", "appearance"), marking="red_box",
    select=select_bca, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(FlaggedCaption(CAPTION, ("causal_events_exist", "causal_events_description"), "causal_event"),
                     WriterQuestion(QUESTION), answer_prompt("bca", ""),
                     perturb_prompt("bca", "give a wrong cause, describe a wrong effect, swap cause and effect, or "
                                    "over- or under-state a factor"), answer_form, leak_share=0.5),
    records_steps=True,
    asks=Asks("a cause or an effect", (asks.CAUSE,), (asks.ASKS_TIME, asks.COUNT, asks.ASKS_EMOTION)),
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM,
    evidence=Evidence("presence", "answer"),
    guideline="The right option explains why the boxed person acts as they do, from what the clip shows or "
              "says. Reject if the cause cannot be seen or heard.",
    paper_no_edit=0.74,
)
