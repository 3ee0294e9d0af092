"""One form for every AST action option: the annotated truth is checked against it, and the model's distractors
that do not have it are dropped, so the right option cannot be picked by its wording."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hvbench_assets.core.tasks import actions, annotations
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.testkit.labels_factory import clip_labels, full


@dataclass
class Reply:  # what the model boundary returns (core.tasks.calls)
    text: str
    call_id: str = "c1"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@pytest.mark.parametrize("text,ok", [("begins to wave", True), ("Begins to wave.", True), ("waves", False),
                                     ("begins to", False), ("begins to " + "x " * 9, False), ("", False),
                                     ("begins to\nwave", False), (None, False)])
def test_action_form(text, ok):
    clean, problem = actions.action_form(text)
    assert (problem is None) is ok, (text, problem)
    if ok:
        assert clean == "begins to wave"
        assert annotations.action_form(text) == "begins to wave"
    else:
        with pytest.raises(annotations.BadAnnotation) as exc:
            annotations.action_form(text)
        assert exc.value.field == "action"


def _ast(reply: str):
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)])
    ann = {"annotation_id": "a1", "value": {"action": "begins to wave", "start_s": 4}}
    return run_family(TASK_BY_ABBREV["AST"], labels, ask=lambda *a, **k: Reply(reply), annotation=lambda t: ann)


def test_ast_distractors_take_the_truths_form_or_the_question_fails():
    out = _ast('{"actions": ["begins to clap", "Stands up and walks slowly towards the camera while smiling", '
               '"begins to drink.", "begins to sit down"]}')
    q, _ = out.question_row()
    assert sorted(o["text"] for o in q["options"] if o["origin"] == "model") == \
        ["begins to clap", "begins to drink", "begins to sit down"]
    out = _ast('{"actions": ["claps", "stands up", "begins to drink"]}')
    reason = out.candidate_row()["reason"]
    assert out.status == "failed" and "failed the checks" in reason and "write it like the distractors" in reason
