"""reviewed_questions from questions + review_decisions: the state rules of core/curation/state.py."""

from __future__ import annotations

import pytest

from hvbench_assets.core.curation.state import curate, curate_question, excluded_tasks
from hvbench_assets.core.curation.store import BadDecision, rebuild_reviewed, record_decision
from hvbench_assets.core.curation.tables import REVIEW_DECISIONS, REVIEWED_QUESTIONS
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse

OPTIONS = [{"letter": "A", "text": "Person 1", "origin": "rule"}, {"letter": "B", "text": "Person 2", "origin": "truth"},
           {"letter": "C", "text": "Person 3", "origin": "rule"}]


def question(qid="q1", abbrev="ASD", answer="B", question_text="Who is speaking?", **extra):
    return {"question_id": qid, "video_id": "clip1", "task": "Active_Speaker_Detection", "abbrev": abbrev,
            "status": "draft", "question": question_text, "options": OPTIONS, "answer": answer,
            "answer_text": {o["letter"]: o["text"] for o in OPTIONS}[answer], "marking": {"kind": "numbers"},
            "clip_sha256": "abc", **extra}


_n = iter(range(10_000))


def decision(q, reviewer, action, **kw):
    i = next(_n)
    return {"decision_id": f"d{i:04d}", "question_id": q["question_id"], "content_hash": question_content_hash(q),
            "reviewer": reviewer, "action": action, "created_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}", **kw}


def test_no_decision_is_unreviewed_and_excluded_tasks_are_not_reviewed():
    q, scm = question(), question("q2", abbrev="SCM")
    rows = {r["question_id"]: r for r in curate([q, scm], [])}
    assert rows["q1"]["state"] == "unreviewed" and rows["q2"]["state"] == "not_reviewed"
    assert rows["q1"]["answer"] == "B" and rows["q1"]["options"] == OPTIONS and rows["q1"]["reviewers"] == []


def test_annotation_requests_get_no_row():
    waiting = {**question("q3", abbrev="HC"), "status": "awaiting_annotation", "question": None, "answer": None,
               "options": [], "answer_text": None}
    assert curate([waiting], []) == []


def test_accept_correct_reject():
    q = question()
    assert curate_question(q, [decision(q, "ann", "accept", blind_choice="B")])["state"] == "accepted"
    corrected = curate_question(q, [decision(q, "ann", "correct", corrected_answer="C")])
    assert (corrected["state"], corrected["answer"], corrected["answer_text"]) == ("corrected", "C", "Person 3")
    written = curate_question(q, [decision(q, "ann", "correct", corrected_text="Nobody speaks")])
    assert written["state"] == "corrected" and written["answer"] == "B" and written["answer_text"] == "Nobody speaks"
    assert [o["origin"] for o in written["options"]] == ["rule", "review", "rule"] and OPTIONS[1]["text"] == "Person 2"
    rejected = curate_question(q, [decision(q, "ann", "reject", reason="bad_track")])
    assert rejected["state"] == "rejected" and rejected["reason"] == "bad_track"


def test_latest_decision_of_a_reviewer_counts():
    q = question()
    ds = [decision(q, "ann", "reject", reason="ambiguous"), decision(q, "ann", "accept")]
    row = curate_question(q, ds)
    assert row["state"] == "accepted" and row["decision_ids"] == [ds[1]["decision_id"]]


def test_decisions_on_another_version_do_not_apply():
    q = question()
    old = decision(q, "ann", "reject", reason="wrong_label")
    regenerated = question(question_text="Who is talking?")
    assert question_content_hash(regenerated) != old["content_hash"]
    assert curate_question(regenerated, [old])["state"] == "unreviewed"


def test_two_reviewers_disagree_until_adjudicated():
    q = question()
    ds = [decision(q, "ann", "accept", blind_choice="B"), decision(q, "bob", "correct", corrected_answer="A")]
    row = curate_question(q, ds)
    assert row["state"] == "disputed" and row["reviewers"] == ["ann", "bob"] and "bob: A" in row["reason"]
    settle = decision(q, "cai", "adjudicate", corrected_answer="A")
    row = curate_question(q, ds + [settle])
    assert (row["state"], row["answer"]) == ("corrected", "A") and row["reviewers"] == ["ann", "bob", "cai"]
    assert row["decision_ids"][-1] == settle["decision_id"]
    reject = curate_question(q, ds + [decision(q, "cai", "adjudicate", reason="ambiguous")])
    assert reject["state"] == "rejected"


def test_two_rejections_for_different_reasons_agree():
    q = question()
    ds = [decision(q, "ann", "reject", reason="bad_track"), decision(q, "bob", "reject", reason="frozen_video")]
    assert curate_question(q, ds)["state"] == "rejected"


def test_assigned_reviewers_must_all_decide():
    q = question()
    assigned = [{"question_id": "q1", "reviewer": r, "role": "review"} for r in ("ann", "bob")]
    row = curate([q], [decision(q, "ann", "accept")], assignments=assigned)[0]
    assert row["state"] == "unreviewed" and row["reason"] == "waiting for bob"
    both = curate([q], [decision(q, "ann", "accept"), decision(q, "bob", "accept")], assignments=assigned)[0]
    assert both["state"] == "accepted"


def test_excluded_tasks_setting():
    assert excluded_tasks(None) == {"AVAD", "SCM"}  # annotated answers (HC, AST, TSA) are reviewed too
    assert excluded_tasks("none") == frozenset()
    assert excluded_tasks("avad, Speech_Content_Matching") == {"AVAD", "SCM"}
    with pytest.raises(ValueError, match="XYZ"):
        excluded_tasks("AVAD,XYZ")


def ann(aid, who, value, kind="count", track=None, t=0):
    return {"annotation_id": aid, "video_id": "clip1", "kind": kind, "track_id": track, "value": value,
            "annotator": who, "created_at": f"2026-01-01T01:00:{t:02d}"}


@pytest.mark.parametrize("abbrev,kind,track,values,agreed", [
    ("HC", "count", None, [("ann", {"count": 5}), ("bob", {"count": 5})], ["ann", "bob"]),
    ("HC", "count", None, [("ann", {"count": 5}), ("bob", {"count": 6})], []),
    ("HC", "count", None, [("ann", {"count": 5}), ("ann", {"count": 5})], []),  # one person twice is no agreement
    ("HC", "count", None, [("ann", {"count": 6}), ("bob", {"count": 5}), ("ann", {"count": 5})], ["ann", "bob"]),
    ("TSA", "action", 0, [("ann", {"action": "begins to wave", "start_s": 3}),
                          ("bob", {"action": "begins to raise a hand", "start_s": 3})], ["ann", "bob"]),
    ("AST", "action", 0, [("ann", {"action": "begins to wave", "start_s": 3}),
                          ("bob", {"action": "begins to raise a hand", "start_s": 3})], []),
    ("AST", "action", 0, [("ann", {"action": "begins to wave", "start_s": 3}),
                          ("bob", {"action": "Begins to  wave.", "start_s": 3})], ["ann", "bob"]),
    ("TSA", "action", 0, [("ann", {"action": "begins to wave", "start_s": 3}),
                          ("bob", {"action": "begins to wave", "start_s": 3})], ["ann", "bob"]),
])
def test_annotated_answers_need_review_unless_two_annotators_agree(abbrev, kind, track, values, agreed):
    anns = [ann(f"a{i}", who, v, kind, track, i) for i, (who, v) in enumerate(values)]
    q = question("qh", abbrev=abbrev, annotation_ids=[anns[-1]["annotation_id"]], target_track_ids=[0])
    row = curate([q], [], annotations=anns)[0]
    assert row["state"] == ("not_reviewed" if agreed else "unreviewed")
    assert row["reason"] == (f"annotators agree: {', '.join(agreed)}" if agreed else None)
    if agreed:  # a reviewer's decision still counts, and an assignment asks for it
        assert curate([q], [decision(q, "rev", "reject", reason="wrong_label")], annotations=anns)[0]["state"] == "rejected"
        assigned = [{"question_id": "qh", "reviewer": "rev", "role": "review"}]
        assert curate([q], [], assignments=assigned, annotations=anns)[0]["state"] == "unreviewed"


def test_an_annotation_of_another_target_does_not_agree():
    anns = [ann("a0", "ann", {"action": "begins to wave", "start_s": 3}, "action", 0, 0),
            ann("a1", "bob", {"action": "begins to wave", "start_s": 3}, "action", 7, 1)]
    q = question("qt", abbrev="TSA", annotation_ids=["a0"], target_track_ids=[0])
    assert curate([q], [], annotations=anns)[0]["state"] == "unreviewed"


def test_record_and_rebuild_in_the_warehouse(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    q, q2 = question(), question("q2", answer="A")
    wh.replace(QUESTIONS, {"video_id": "clip1", "task": q["task"]}, [q])
    wh.replace(QUESTIONS, {"video_id": "clip2", "task": q["task"]}, [{**q2, "video_id": "clip2"}])
    d = record_decision(wh, q, "ann", "reject", reason="frozen_video", blind_choice="A", shown_order=["C", "A", "B"],
                        seconds_spent=4.2, content_hash=question_content_hash(q))
    assert wh.rows(REVIEW_DECISIONS)[0]["shown_order"] == ["C", "A", "B"]
    rows = {r["question_id"]: r for r in rebuild_reviewed(wh, excluded_tasks(None), {"code_version": "t"})}
    assert rows["q1"]["state"] == "rejected" and rows["q1"]["decision_ids"] == [d["decision_id"]]
    stored = {r["question_id"]: r for r in wh.rows(REVIEWED_QUESTIONS)}
    assert stored["q1"]["state"] == "rejected" and stored["q2"]["state"] == "unreviewed"
    wh.execute("DELETE FROM questions WHERE video_id = 'clip2'")  # a question that vanished loses its row
    rebuild_reviewed(wh, excluded_tasks(None), {})
    assert [r["question_id"] for r in wh.rows(REVIEWED_QUESTIONS)] == ["q1"]


def test_bad_decisions_are_refused_with_the_reason(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    q = question()
    with pytest.raises(BadDecision, match="reason"):
        record_decision(wh, q, "ann", "reject")
    with pytest.raises(BadDecision, match="needs a text"):
        record_decision(wh, q, "ann", "reject", reason="other")
    with pytest.raises(BadDecision, match="not an option"):
        record_decision(wh, q, "ann", "accept", blind_choice="F")
    with pytest.raises(BadDecision, match="changed since"):
        record_decision(wh, q, "ann", "accept", content_hash="0000")
    with pytest.raises(BadDecision, match="accept instead"):
        record_decision(wh, q, "ann", "correct", corrected_answer="B")
    assert wh.count(REVIEW_DECISIONS) == 0
