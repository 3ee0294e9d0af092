"""ER, Emotion Recognition: which emotion the red-boxed person shows. The target is the most-present person with an
L5 face description, which is the caption; the writer asks about it, the ensemble's winner is the truth, and the
pool balances ER by the truth's polarity (positive : neutral : negative = 1 : 1 : 2, as the paper)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.synthesis import forms
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.prompts import answer_prompt, perturb_prompt, question_prompt
from hvbench_assets.core.synthesis.recipe import LabelCaption, Recipe, WriterQuestion
from hvbench_assets.core.tasks import asks, descriptive
from hvbench_assets.core.tasks.descriptive import DescriptiveParams
from hvbench_assets.core.tasks.family import EMOTION, FACE_GATE, Evidence, Strata, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict


def select_er(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    target = descriptive.most_present_target(labels, "er", {}, "the most-present person")
    return descriptive.with_face_description(target, labels)


QUESTION = question_prompt(
    "er", "A description of one person in a video.\nFace and emotion: {caption}\nAppearance: {appearance}",
    "asking which emotion this person shows, referring to the person only by appearance, and its answer: one "
    "short sentence naming the emotion(s). The question must not name or hint at any emotion.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option names at least one emotion of the taxonomy (core/synthesis/words.py); no two name the same."""
    return Form("an emotion of the taxonomy", forms.names_emotions, forms.emotion_set, "emotions")


POLARITY = (("positive", 1), ("neutral", 1), ("negative", 2))  # the paper's balance of ER questions


def polarity_stratum(row: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The truth's polarity, stored by the chain (rule_params.polarity)."""
    polarity = (row.get("rule_params") or {}).get("polarity")
    if polarity in {p for p, _ in POLARITY}:
        return polarity, None
    return None, f"ER question without a polarity (rule_params.polarity={polarity!r})"


FAMILY = TaskFamily(
    name="Emotion_Recognition", abbrev="ER", category=EMOTION, asset="emotion_recognition",
    labels=("human_tracks", "appearance", "facial_description"), marking="red_box", face_gate=FACE_GATE,
    select=select_er, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(LabelCaption(), WriterQuestion(QUESTION), answer_prompt("er", ""),
                     perturb_prompt("er", "replace an emotion word with a wrong one, or add an emotion the person "
                                    "does not show"), answer_form, leak_kind="emotion", polarity=True),
    records_steps=True,
    asks=Asks("the emotion the person shows", (asks.EMOTION,), asks.ASKS_FEELING), answer_kind="emotion",
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM, answer_labels=("facial_description",),
    evidence=Evidence("presence", "answer"),
    guideline="Watch the boxed person's face, voice and posture. Keep the option that best fits the feeling "
              "shown over the clip, not a single frame (an open mouth while talking is not surprise). Reject "
              "if the box leaves the person or the face is never visible.",
    paper_no_edit=0.81, strata=Strata(POLARITY, polarity_stratum),
)
