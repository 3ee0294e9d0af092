"""H2T, Human2Text: a description of the red-boxed person among 3-7 people. The writer describes the most-present
person ("The person is ..."), which is the first candidate answer of a fixed question; the ensemble's winner is
the truth and its perturbations change a position or an appearance detail."""

from __future__ import annotations

from hvbench_assets.core.synthesis import forms
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.prompts import answer_prompt, caption_prompt, perturb_prompt
from hvbench_assets.core.synthesis.recipe import DescriptionCaption, FixedQuestion, Recipe
from hvbench_assets.core.synthesis.replies import person_sentence
from hvbench_assets.core.tasks import descriptive
from hvbench_assets.core.tasks.descriptive import DescriptiveParams
from hvbench_assets.core.tasks.family import FACE_GATE, PERSON, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict, check_range, person_count


def select_h2t(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "people", "people", person_count(labels), p.min_people, p.max_people):
        return v
    return descriptive.most_present_target(labels, "h2t", m, "the most-present person among 3-7 people")


CAPTION = caption_prompt(
    "h2t", "A red box marks one person in these frames (appearance notes: {appearance}). In one sentence, describe "
    "this person so that they can be told apart from everyone else in the video, using their appearance, where "
    "they are and what they do. Begin with \"The person is\".")
QUESTION = ("Describe the person marked by the red box so that they can be told apart from everyone else "
            "in the video, using appearance, position and actions.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option is one sentence "The person is ..."."""
    return Form("'The person is ...'", forms.person, read=person_sentence)


FAMILY = TaskFamily(
    name="Human2Text", abbrev="H2T", category=PERSON, asset="human_to_text",
    labels=("human_tracks", "person_count", "appearance"), marking="red_box", face_gate=FACE_GATE,
    select=select_h2t, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(DescriptionCaption(CAPTION), FixedQuestion(QUESTION, caption_answers=True),
                     answer_prompt("h2t", " Begin with \"The person is\"."),
                     perturb_prompt("h2t", "make the position relative to objects or other people wrong, or change a "
                                    "detail of the person's appearance (clothing, colour, hair, accessories)"),
                     answer_form),
    records_steps=True,
    asks=Asks("a description of the person", (r"\b(?:describe|description|look like|appearance)\b",)),
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM, answer_labels=("appearance",),
    evidence=Evidence("presence", "answer"),
    guideline="Read each description against the boxed person: the right one fits clothes, build and visible "
              "traits, the others each contain a detail that does not. Correct a wrong detail in writing "
              "rather than reject.",
    paper_no_edit=0.65,
)
