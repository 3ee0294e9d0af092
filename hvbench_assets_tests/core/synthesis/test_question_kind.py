"""The question-kind check (core/synthesis/checks.py `question_kind`, the catalog's `asks`): good and bad questions
of every family whose question a model writes, and the fixed and template wording of every other family."""

from __future__ import annotations

import ast
import inspect

import pytest

from hvbench_assets.core.synthesis.checks import question_kind as kind_of
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS
from hvbench_assets_tests.conftest import parse_python

# family -> (questions that ask what its options answer, questions that ask something else)
MODEL_QUESTIONS = {
    "ER": (["Which emotion does the woman in the green shirt show?",
            "How does the man with the grey beard feel during the clip?",
            "What mood is the person in the red jacket in?",
            "What does the face of the girl with the ponytail express?"],
           ["Why does the woman in the green shirt look so happy?",
            "Which action does the woman in the green shirt perform?",
            "What is the man in the blue coat wearing?",
            "How many people are next to the woman in the green shirt?"]),
    "ETA": (["How do the feelings of the woman in the green shirt develop?",
             "How does the emotional state of the man in the suit change as the video goes on?",
             "In what order do emotions appear on the face of the boy in the cap?"],
            ["Which emotion does the woman in the green shirt show?",
             "What does the man in the suit do, in order?",
             "Why does the emotion of the boy in the cap change?"]),
    "AR": (["What is the attitude of the man in the white shirt and tie?",
            "How does the woman in the red dress feel about the food she is tasting?",
            "What is the stance of the person in the grey hoodie towards the speaker?"],
           ["Which action best describes the man in the white shirt?",
            "Which action best describes the attitude of the man in the white shirt?",
            "What is the woman in the red dress doing?",
            "Which emotion does the person in the grey hoodie show towards the speaker?",
            "At which second does the man in the white shirt smile?"]),
    "BTA": (["What does the person in the red shirt do, in order?",
             "Which actions does the woman with long hair perform, one after the other?",
             "What sequence of movements does the man in the apron make?"],
            ["How does the person in the red shirt feel?",
             "Which emotion does the woman with long hair show while she moves?",
             "At which second does the man in the apron start to move?",
             "What is the man in the apron wearing?"]),
    "BCA": (["Why does the woman in the green shirt pick up the phone?",
             "What happens after the man in the apron drops the cup?",
             "What causes the boy in the cap to laugh?",
             "What is the result of the girl in yellow waving at the camera?"],
            ["Which emotion does the woman in the green shirt show?",
             "What is the man in the apron wearing?",
             "How many cups does the man in the apron hold?",
             "At which second does the girl in yellow wave?"]),
}


def question_kind(abbrev: str, question: str) -> str | None:
    return kind_of(TASK_BY_ABBREV[abbrev].asks, question)


WRITERS = sorted(t.abbrev for t in TASKS if t.model_question)


def test_every_family_says_what_its_question_asks_and_every_writer_is_tested():
    assert all(t.asks is not None and t.asks.all_of for t in TASKS)
    assert sorted(MODEL_QUESTIONS) == WRITERS == ["AR", "BCA", "BTA", "ER", "ETA"]


@pytest.mark.parametrize("abbrev", WRITERS)
def test_model_questions_of_the_right_kind_pass_and_others_fail(abbrev):
    good, bad = MODEL_QUESTIONS[abbrev]
    assert [q for q in good if question_kind(abbrev, q)] == []
    for q in bad:
        problem = question_kind(abbrev, q)
        assert problem and q in problem, q  # the problem names the question and what was wanted
        assert "answer" in problem


def template_questions() -> list[tuple[str, str]]:
    """(family, question) of every `question=` a rule family's build writes, its f-string fields filled with a
    word: the wording the offline path stores, read from the code itself (the family's module)."""
    out = []
    for module in {inspect.getmodule(t.build) for t in TASKS if not t.descriptive and not t.model_question}:
        for fn in ast.walk(parse_python(inspect.getsource(module))):
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("build_")):
                continue
            for call in ast.walk(fn):
                for kw in getattr(call, "keywords", []) if isinstance(call, ast.Call) else []:
                    if kw.arg == "question":
                        text = "".join(v.value if isinstance(v, ast.Constant) else "waves"
                                       for v in (kw.value.values if isinstance(kw.value, ast.JoinedStr) else [kw.value]))
                        out.append((fn.name.removeprefix("build_").upper(), text))
    return out


def test_fixed_and_template_questions_pass_for_every_other_family():
    found = template_questions() + [(t.abbrev, t.synthesis.question.text.format(numbers="1, 2, 3", first=1))
                                    for t in TASKS if t.descriptive and t.synthesis.question.prompt is None]
    assert {f for f, _ in found} == {t.abbrev for t in TASKS if not t.model_question}
    assert [(f, q, question_kind(f, q)) for f, q in found if question_kind(f, q)] == []
