"""ETA, Emotion Temporal Analysis: how the red-boxed person's emotions change over the clip. A clip longer than
7 s and its most-present person with an L5 face description; the writer first says from that description whether
the emotion changes (no change rejects the clip), then asks about the sequence."""

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
from hvbench_assets.core.tasks.family import EMOTION, FACE_GATE, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict


def select_eta(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    return descriptive.with_face_description(descriptive.long_clip_target(labels, p, "eta"), labels)


CAPTION = caption_prompt(
    "eta", "A face-focused description of one person over a video clip, and how the person looks:\n"
    "Face: {facial}\nAppearance: {appearance}\nDoes the person's emotion change during the clip?"
    + flag_reply("emotion_change", "emotion_sequence", "the emotions in the order they appear, in one sentence"),
    n_frames=0)
QUESTION = question_prompt(
    "eta", "How one person's emotions develop over a video: {caption}\nAppearance: {appearance}",
    "asking how this person's emotions change as the video goes on, referring to the person only by appearance, "
    "and its answer: one sentence with the emotions in order. The question must not name any emotion.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option names emotions of the taxonomy; no two name the same sequence."""
    return Form("emotions of the taxonomy in order", forms.names_emotions, forms.emotion_sequence, "emotion sequence")


FAMILY = TaskFamily(
    name="Emotion_Temporal_Analysis", abbrev="ETA", category=EMOTION, asset="emotion_temporal_analysis",
    labels=("human_tracks", "appearance", "facial_description"), marking="red_box", face_gate=FACE_GATE,
    select=select_eta, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(FlaggedCaption(CAPTION, ("emotion_change", "emotion_sequence"), "emotion_change"),
                     WriterQuestion(QUESTION), answer_prompt("eta", ""),
                     perturb_prompt("eta", "insert an emotion that does not occur into the sequence, drop one that "
                                    "does, or replace one with a wrong one"), answer_form, leak_kind="emotion"),
    records_steps=True,
    asks=Asks("how the person's emotions change over the clip", (asks.EMOTION, asks.CHANGE), asks.ASKS_FEELING),
    answer_kind="emotion_sequence",
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM, answer_labels=("facial_description",),
    evidence=Evidence("presence", "answer"),
    guideline="Follow the boxed person from start to end: the right option names the emotions in the order "
              "they happen. Options with the right emotions in the wrong order are wrong. Reject if no change "
              "can be seen.",
    paper_no_edit=0.83,
)
