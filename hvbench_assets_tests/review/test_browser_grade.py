"""The grade queue by keyboard in the system chromium: one key per verdict, a skip, and `u` to grade the last reply
again; the warehouse holds what was pressed, and the latest grade of a reply is the one that counts."""

from __future__ import annotations

import pytest

from hvbench_assets.core.curation.grading import human_verdicts
from hvbench_assets.core.curation.tables import HUMAN_GRADES
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.review.harness import app_page
from hvbench_assets.testkit.open_answers import mc_export, open_evaluation

pytestmark = pytest.mark.slow


def test_grading_by_keys_skip_and_grade_again(tmp_path):
    folder = mc_export(tmp_path / "data" / "benchmarks" / "mine", tmp_path)
    open_evaluation(folder, tmp_path / "wh.duckdb")
    with app_page(tmp_path, "/grade") as (page, errors):

        def counter(text: str) -> None:
            page.wait_for_function("(t) => document.getElementById('progress-text').textContent === t", arg=text)

        counter("0 graded · 12 left")
        replies = []
        for key, done in (("1", 1), ("2", 2), ("0", 3)):
            replies.append(page.inner_text("#reply"))
            page.keyboard.press(key)
            counter(f"{done} graded · {12 - done} left")
        assert page.inner_text("#status").startswith("saved: ungradable")
        skipped = page.inner_text("#reply")
        page.keyboard.press("n")  # skip: another reply, nothing stored, the skipped one still counts as left
        page.wait_for_function("(r) => document.getElementById('reply').textContent !== r", arg=skipped)
        assert page.inner_text("#progress-text") == "3 graded · 9 left"
        page.keyboard.press("u")  # the last graded reply again; its new grade replaces the "cannot tell"
        page.wait_for_function("(r) => document.getElementById('reply').textContent === r", arg=replies[-1])
        page.keyboard.press("2")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('saved: wrong')")
        assert not errors
    wh = Warehouse(tmp_path / "wh.duckdb")
    grades = wh.rows(HUMAN_GRADES, order_by="created_at")
    assert [g["verdict"] for g in grades] == ["right", "wrong", "ungradable", "wrong"] and {g["grader"] for g in grades} == {"kim"}
    assert grades[2]["reply_id"] == grades[3]["reply_id"]
    said = human_verdicts(grades, wh.rows(EVAL_RESPONSES))
    assert sorted(said.values()) == ["right", "wrong", "wrong"]  # the third reply's latest grade: wrong
