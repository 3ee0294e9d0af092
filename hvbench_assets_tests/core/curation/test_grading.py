"""The grade queue's rules and the agreement figures, without HTTP: which replies wait, how grades make a human
verdict, and the judge's and the matcher's agreement with people counted by hand."""

from __future__ import annotations

import datetime as dt

import pytest

from hvbench_assets.core.curation.grading import BadGrade, grade_queue, human_verdicts, record_grade, reply_id, reply_sha
from hvbench_assets.core.curation.tables import HUMAN_GRADES
from hvbench_assets.core.scoring.open_report import markdown_section, open_grading
from hvbench_assets.core.warehouse import Warehouse


def reply(run, qid, text, grade="right", judge="right", correct=True, **kw):
    return {"run_id": run, "task": "Human_Count", "question_id": qid, "benchmark": "b_open", "rotation": 0,
            "status": "parsed", "response": text, "grade": grade, "judge_verdict": judge, "correct": correct, **kw}


def g(r, grader, verdict, minute):
    return {"grade_id": f"g{grader}{minute}", "reply_id": reply_id(r["run_id"], r["task"], r["question_id"]),
            "reply_sha": reply_sha(r["response"]), "grader": grader, "verdict": verdict,
            "created_at": dt.datetime(2026, 1, 1, 0, minute)}


def test_the_queue_holds_open_replies_nobody_graded_in_their_current_wording():
    a, b, c = reply("r1", "q1", "3"), reply("r1", "q2", "three"), reply("r2", "q1", "4", grade="wrong")
    failed, rotated, blank = reply("r1", "q3", "", status="failed"), reply("r1", "q4", "3", rotation=1), reply("r1", "q5", " ")
    mc = {**reply("r3", "q1", "B"), "grade": None}  # a multiple-choice reply: no grade, not open
    queue = grade_queue([a, b, c, failed, rotated, blank, mc], [])
    assert [r["question_id"] for r in queue] == [r["question_id"] for r in sorted([a, b, c], key=lambda r: reply_id(
        r["run_id"], r["task"], r["question_id"]))]  # a fixed order by the reply's hash: a random sample when cut
    assert len(grade_queue([a, b, c], [g(a, "gil", "right", 1)])) == 2
    asked_again = {**a, "response": "3 people"}  # another wording of the same item: graded again
    assert len(grade_queue([asked_again, b, c], [g(a, "gil", "right", 1)])) == 3


def test_human_verdict_is_each_graders_latest_and_left_out_when_they_differ_or_cannot_tell():
    a, b, c, d = (reply("r1", f"q{i}", f"text {i}") for i in range(4))
    grades = [g(a, "gil", "wrong", 1), g(a, "gil", "right", 2),  # gil changed her mind: right
              g(b, "gil", "right", 1), g(b, "hal", "wrong", 2),  # two graders disagree: left out
              g(c, "gil", "ungradable", 1),  # could not tell: left out
              g(d, "gil", "wrong", 1), g(d, "hal", "wrong", 3)]
    said = human_verdicts(grades, [a, b, c, d])
    assert said == {("r1", "Human_Count", "q0"): "right", ("r1", "Human_Count", "q3"): "wrong"}
    assert human_verdicts(grades, [{**a, "response": "other text"}]) == {}  # the grade was of another wording


def test_agreement_with_people_counted_by_hand():
    rows = [
        reply("r1", "q1", "a", grade="right", judge="right"),  # people: right -> judge and matcher agree
        reply("r1", "q2", "b", grade="right", judge="wrong"),  # people: right -> judge disagrees, matcher agrees
        reply("r1", "q3", "c", grade="ungradable", judge="wrong", correct=False),  # people: wrong -> judge agrees
        reply("r1", "q4", "d", grade="wrong", judge="ungradable", correct=False),  # people: right -> matcher disagrees
        reply("r1", "q5", "e", grade="wrong", judge="wrong", correct=False),  # nobody graded it
    ]
    human = {("r1", "Human_Count", q): v for q, v in (("q1", "right"), ("q2", "right"), ("q3", "wrong"), ("q4", "right"))}
    (got,) = open_grading(rows, {"r1": "m"}, human)
    assert got.humans == 4
    assert (got.judge_human.both, got.judge_human.agree) == (3, 2)  # q1, q2, q3 (q4: judge undecided)
    assert (got.match_human.both, got.match_human.agree) == (3, 2)  # q1, q2, q4 (q3: matcher could not)
    assert (got.judge_match.both, got.judge_match.agree) == (3, 2)  # q1, q2, q5: unchanged by the people
    assert "| m | 5 | 40.0 | 4 | 1 | 0 | 66.7 (2/3) | 4 | 66.7 (2/3) | 66.7 (2/3) |" in markdown_section([got])
    (none,) = open_grading(rows, {"r1": "m"})
    assert none.humans == 0 and "| 0 | - | - |" in markdown_section([none])


def test_a_grade_is_stored_once_per_request_and_needs_a_known_verdict(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    r = reply("r1", "q1", "3")
    first = record_grade(wh, r, "gil", "right", request_id="k1", seconds_spent=2.5)
    again = record_grade(wh, r, "gil", "right", request_id="k1")
    assert not first["duplicate"] and again["duplicate"] and again["grade_id"] == first["grade_id"]
    (row,) = wh.rows(HUMAN_GRADES)
    assert row["reply_sha"] == reply_sha("3") and row["grader"] == "gil" and row["seconds_spent"] == 2.5
    with pytest.raises(BadGrade, match="unknown verdict 'maybe'"):
        record_grade(wh, r, "gil", "maybe")
    with pytest.raises(BadGrade, match="grader's name"):
        record_grade(wh, r, " ", "right")
    assert len(wh.rows(HUMAN_GRADES)) == 1
