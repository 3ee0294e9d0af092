"""EIC, Emotion Intensity Compare: which of the numbered people shows the strongest emotion, and which. The 4-6
tracks sharing the clip's longest presence are numbered; the question is fixed, every answer comes from the
answering models as "number-emotion" ("2-happy"), and the ensemble's winner is the truth."""

from __future__ import annotations

from hvbench_assets.core.synthesis import forms
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.prompts import answer_prompt, perturb_prompt
from hvbench_assets.core.synthesis.recipe import FixedQuestion, NoCaption, Recipe
from hvbench_assets.core.tasks import asks, descriptive
from hvbench_assets.core.tasks.descriptive import DescriptiveParams
from hvbench_assets.core.tasks.family import EMOTION, FACE_GATE, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict, co_present


def select_eic(labels: ClipLabels, p: DescriptiveParams) -> Verdict:
    m: dict = {}
    sharing = co_present(labels, p, m)
    if isinstance(sharing, Verdict):
        return sharing
    ids = tuple(sorted(t.track_id for t in sharing))
    return Verdict(True, "eic", f"{len(sharing)} tracks share the longest presence", m, target=list(ids),
                   target_track_ids=ids)


QUESTION = ("Which of the persons numbered {numbers} shows the strongest emotion, and which emotion is it? "
            "Answer as number-emotion, for example {first}-happy.")


def answer_form(numbers: tuple[int, ...] = ()) -> Form:
    """Every option is "number-emotion" with an offered person's number and an emotion of the taxonomy; an
    answering model's "Person 2: happy" is read as "2-happy"."""
    return Form("number-emotion", forms.number_emotion(numbers), lambda t: t.strip().lower(), "number-emotion",
                read=forms.read_number_emotion(numbers))


FAMILY = TaskFamily(
    name="Emotion_Intensity_Compare", abbrev="EIC", category=EMOTION, asset="emotion_intensity_comparison",
    labels=("human_tracks",), marking="numbers", face_gate=FACE_GATE,
    select=select_eic, build=descriptive.build, params=DescriptiveParams(),
    synthesis=Recipe(NoCaption(), FixedQuestion(QUESTION),
                     answer_prompt("eic", " Reply only as number-emotion, for example \"2-happy\"."),
                     perturb_prompt("eic", "if a draft names the same number as the correct answer, change its "
                                    "emotion; if it names another number, the emotion may stay"), answer_form,
                     length_band=(0.3, 3.0)),
    records_steps=True,
    asks=Asks("which numbered person shows which emotion", (asks.PERSON, asks.EMOTION)), answer_kind="person_emotion",
    truth=descriptive.TRUTH, answer_from=descriptive.TRUTH_FROM,
    evidence=Evidence("presence", "offered"),
    guideline="Compare the numbered people: the right option ranks them by how strongly they show the emotion "
              "asked about. Reject if two are too close to call or a number sits on the wrong person.",
    paper_no_edit=0.63,
)
