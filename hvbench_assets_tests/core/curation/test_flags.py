"""Flagged items back to review, without HTTP: which report flags send an item back (worked out by hand on
scripted replies), when a flag is open, where flagged questions sit in the queue, and that a pick on one asks for
a second look instead of accepting."""

from __future__ import annotations

import datetime as dt

import pytest

from hvbench_assets.core.curation.decisions import pick_accepts as pick_decides
from hvbench_assets.core.curation.flags import (MISS_CHANCE, NEGATIVE_DISCRIMINATION, WRONG_BY_ALL, chance_all_miss,
                                                flag_outcome, for_review, open_flags, shown_flag, text_arm_at_chance,
                                                write_flags)
from hvbench_assets.core.curation.queue import review_queue
from hvbench_assets.core.curation.state import curate, excluded_tasks
from hvbench_assets.core.curation.tables import REVIEW_FLAGS
from hvbench_assets.core.scoring.report import build_report, flagged_items, review_candidates
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.core.curation.test_state import decision, question

EXCLUDED = excluded_tasks(None)
TASK = "Emotion_Recognition"
# 4 models x 5 items, 4 options, the answer always A. m1 and m2 are right on q1-q3, m3 and m4 wrong there; on q4
# it is the other way round (r_pb = -1: the strong models fail it); on q5 every model picks a wrong option; on q6
# m4 gives no letter and the others pick wrong: nobody right, but not every model *chose* wrong.
PICKS = {"m1": "AAABCB", "m2": "AAABDC", "m3": "BCDAB?", "m4": "CBCAC?"}
TEXTS = ["calm", "angry", "sad", "afraid"]


def rows(easy: int = 6) -> list[dict]:
    """The items above, then `easy` more that every model gets right (q7...): the models' record elsewhere."""
    out = []
    for model, picks in PICKS.items():
        for i, pick in enumerate(picks + "A" * easy, start=1):
            chosen = None if pick == "?" else pick
            out.append({"run_id": f"b__{model}__x", "benchmark": "b", "model": model, "task": TASK, "question_id": f"q{i}",
                        "rotation": 0, "n_options": 4, "letters": list("ABCD"), "options": TEXTS, "answer": "A",
                        "answer_original": "A", "chosen": chosen, "chosen_original": chosen, "correct": chosen == "A",
                        "status": "parsed" if chosen else "unparsed", "method": "bare_letter" if chosen else "no_match"})
    return out


def test_text_arm_at_chance_by_hand():
    assert text_arm_at_chance((0, 2), 4) and text_arm_at_chance((1, 4), 4)  # 25 % of 4 options: a guess
    assert not text_arm_at_chance((1, 2), 4) and not text_arm_at_chance((2, 2), 4)
    assert not text_arm_at_chance(None, 4) and not text_arm_at_chance((0, 0), 4)  # no text arm: nothing known


def test_negative_discrimination_and_wrong_by_all_go_back_to_review_and_the_rest_stays_in_the_csv():
    data = build_report(rows(), benchmark="b")
    by_q = {s.question_id: why for s, why in flagged_items(data)}
    assert NEGATIVE_DISCRIMINATION in by_q["q4"] and WRONG_BY_ALL not in by_q["q5"]  # no text arm yet
    assert review_candidates(data) and {c["question_id"] for c in review_candidates(data)} == {"q4"}
    data.text_arm = {(TASK, "q5"): (0, 2), (TASK, "q6"): (0, 2), (TASK, "q4"): (2, 2)}
    by_q = {s.question_id: why for s, why in flagged_items(data)}
    assert by_q["q5"] == f"nobody right; {WRONG_BY_ALL}"
    assert WRONG_BY_ALL not in by_q["q6"] and "nobody right" in by_q["q6"]  # an unparsed reply chose nothing
    found = {c["question_id"]: c for c in review_candidates(data)}
    assert set(found) == {"q4", "q5"}
    assert found["q4"]["detail"] == "r_pb -1.00 over 4 models"
    # by hand: m1 and m2 are right on 9 of their 11 other answers, shrunk toward 10/13 overall: (9 + 2 * 10/13) / 13
    # = 0.811; m3 and m4 on 7 of 10, (7 + 2 * 8/12) / 12 = 0.694; all four missing: 0.189^2 * 0.306^2 = 0.33 %
    assert found["q5"]["detail"] == ("all 4 models chose a wrong option (missing it by luck: 0.3 %, from their other "
                                     "answers); text arm 0/2 right (chance 25 %)")
    assert found["q5"]["answers"] == [{"model": "m1", "text": "sad", "right": False},
                                      {"model": "m2", "text": "afraid", "right": False},
                                      {"model": "m3", "text": "angry", "right": False},
                                      {"model": "m4", "text": "sad", "right": False}]
    assert found["q5"]["options"] == TEXTS and for_review(found["q5"]["reasons"]) == [WRONG_BY_ALL]
    data.text_arm[(TASK, "q5")] = (1, 2)  # the text arm beats chance: a hint in the texts, not a wrong key
    assert {c["question_id"] for c in review_candidates(data)} == {"q4"}


def test_weak_models_all_wrong_do_not_send_an_item_back():
    """Without the easy items the models are weak: m1 and m2 right on 3 of 5 other answers, m3 and m4 on 1 of 4.
    By hand: (3 + 2 * 4/7) / 7 = 0.592 and (1 + 2 * 2/6) / 6 = 0.278, so all four miss a sound item with
    0.408^2 * 0.722^2 = 8.7 % > 5 %: q5 is not taken for a wrong key."""
    data = build_report(rows(easy=0), benchmark="b")
    data.text_arm = {(TASK, "q5"): (0, 2)}
    by_q = {s.question_id: why for s, why in flagged_items(data)}
    assert by_q["q5"] == "nobody right" and {c["question_id"] for c in review_candidates(data)} == {"q4"}
    assert chance_all_miss([(3, 5, 3, 5)] * 2 + [(1, 4, 1, 4)] * 2) == pytest.approx(0.0869, abs=5e-4)
    assert chance_all_miss([(0, 0, 0, 0)]) == 0.5  # one model, nothing else known: a coin
    assert chance_all_miss([(0, 0, 20, 20)] * 2) < MISS_CHANCE  # two models right on everything else


EARLY = "2026-01-01T00:00:01"


def _flag(q, at="2026-01-01T00:30:00", **kw):
    return {"benchmark": "b", "question_id": q["question_id"], "content_hash": question_content_hash(q),
            "reasons": [WRONG_BY_ALL], "detail": "all 3 models chose a wrong option", "current": True,
            "answers": [{"model": "m1", "text": "Person 1", "right": False}], "flagged_at": at, **kw}


def test_a_flag_is_open_until_anyone_decides_on_its_version_after_it():
    q1, q2, q3, q4 = (question(f"q{i}") for i in range(1, 5))
    before = {**decision(q1, "ann", "accept", blind_choice="B"), "created_at": EARLY}  # before the report
    flags = [_flag(q1, at="2026-01-01T00:30:00"), _flag(q2), _flag(q3, current=False),
             _flag(q4, content_hash="an-older-version")]
    hashes = {q["question_id"]: question_content_hash(q) for q in (q1, q2, q3, q4)}
    assert set(open_flags(flags, [before], hashes)) == {"q1", "q2"}  # q3: no longer raised; q4: another version
    assert flag_outcome(flags[0], [before]) is None
    after = {**decision(q1, "bob", "reject", reason="wrong_label"), "created_at": "2026-01-01T01:00:00"}
    assert flag_outcome(flags[0], [before, after]) == after
    assert set(open_flags(flags, [before, after], hashes)) == {"q2"}


def test_flagged_questions_come_after_assigned_ones_whatever_their_state_and_leave_when_decided():
    q1, q2, q3, scm = question("q1"), question("q2"), question("q3"), question("q4", abbrev="SCM")
    ds = [{**decision(q1, "ann", "accept", blind_choice="B"), "created_at": EARLY}]
    assigned = [{"question_id": "q3", "reviewer": "ann", "role": "review"}]
    qs = [q1, q2, q3, scm]
    hashes = {q["question_id"]: question_content_hash(q) for q in qs}
    flagged = open_flags([_flag(q1), _flag(scm)], ds, hashes)
    states = {r["question_id"]: r for r in curate(qs, ds, EXCLUDED, assigned)}
    assert states["q1"]["state"] == "accepted" and states["q4"]["state"] == "not_reviewed"

    def queue(who, decisions=ds):
        return [q["question_id"] for q in review_queue(qs, decisions, assigned, EXCLUDED, who, states=states,
                                                       flagged=flagged)]

    # ann accepted q1 before the flag and SCM is not reviewed by configuration: both come back, after her q3
    assert queue("ann") == ["q3", "q1", "q4", "q2"]
    assert queue("bob") == ["q1", "q4", "q2"]
    later = {**decision(q1, "bob", "correct", corrected_answer="C"), "created_at": "2026-01-01T01:00:00"}
    flagged = open_flags([_flag(q1), _flag(scm)], ds + [later], hashes)
    states = {r["question_id"]: r for r in curate(qs, ds + [later], EXCLUDED, assigned)}
    assert queue("bob", ds + [later]) == ["q4", "q2"] and states["q1"]["state"] == "disputed"  # ann kept, bob corrected
    disputed = open_flags([_flag(q1, at="2026-01-01T02:00:00")], ds + [later], hashes)  # flagged again later
    assert "q1" in disputed and "q1" not in [q["question_id"] for q in review_queue(
        qs, ds + [later], assigned, EXCLUDED, "cai", states=states, flagged=disputed)]  # adjudication settles it


def test_a_pick_on_a_flagged_question_shows_the_models_answers_before_anything_is_stored():
    assert pick_decides("B", "B", flagged=False) and not pick_decides("B", "B", flagged=True)
    assert not pick_decides("C", "B", flagged=False) and not pick_decides(None, "B", flagged=False)
    q = question()
    before, after = shown_flag([_flag(q)], picked=False), shown_flag([_flag(q)], picked=True)
    assert before == {"reasons": [WRONG_BY_ALL], "detail": "b: all 3 models chose a wrong option"}  # no answers yet
    assert after["answers"] == [{"benchmark": "b", "model": "m1", "text": "Person 1", "right": False}]


def test_write_flags_keeps_the_first_time_marks_history_and_skips_what_is_not_ours(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    q1, q2 = question("q1"), question("q2")
    wh.replace(QUESTIONS, {"video_id": "clip1", "task": q1["task"]}, [q1, q2], provenance={"backend": "t", "model": None, "code_version": "t"})
    texts = [o["text"] for o in q1["options"]]

    def cand(qid, options=texts, reasons=(WRONG_BY_ALL,)):
        return {"task": TASK, "question_id": qid, "reasons": list(reasons), "detail": "d", "answers": [],
                "options": options}

    t0, t1 = dt.datetime(2026, 1, 1, 0, 0), dt.datetime(2026, 1, 2, 0, 0)
    out = write_flags(wh, "b", [cand("q1"), cand("q2", options=["x", "y", "z"]), cand("qpub"),
                                cand("q1x", reasons=("non-functional distractors",))], now=t0)
    assert out == {"sent": ["q1"], "new": ["q1"], "not_ours": ["qpub"], "changed": ["q2"]}
    out = write_flags(wh, "b", [cand("q1"), cand("q2")], now=t1)  # built again: q1 keeps its time
    assert out["sent"] == ["q1", "q2"] and out["new"] == ["q2"]
    rows = {r["question_id"]: r for r in wh.rows(REVIEW_FLAGS)}
    assert rows["q1"]["flagged_at"] == t0 and rows["q2"]["flagged_at"] == t1
    write_flags(wh, "b", [cand("q2")], now=dt.datetime(2026, 1, 3))  # q1 no longer raised: kept, not current
    rows = {r["question_id"]: r for r in wh.rows(REVIEW_FLAGS)}
    assert rows["q1"]["current"] is False and rows["q2"]["current"] is True
    assert {r["written_at"] for r in rows.values()} == {dt.datetime(2026, 1, 3)}


@pytest.mark.parametrize("reasons", [[], ["nobody right", "answer predictable from text"]])
def test_other_flags_do_not_go_back(reasons):
    assert for_review(reasons) == []
