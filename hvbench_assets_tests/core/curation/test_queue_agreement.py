"""Review queue, adjudication list, annotation queue, kappa (checked against scikit-learn) and accuracy."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from sklearn.metrics import cohen_kappa_score

from hvbench_assets.core.curation.agreement import cohen_kappa, human_baseline, kappa_table, reviewer_accuracy
from hvbench_assets.core.curation.queue import adjudication_list, annotation_queue, review_queue, shown_order
from hvbench_assets.core.curation.state import curate, excluded_tasks
from hvbench_assets.core.curation.tokens import create_token, requires_token, reviewer_for, revoke_token
from hvbench_assets.core.curation.tables import REVIEWER_TOKENS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.core.curation.test_state import decision, question

EXCLUDED = excluded_tasks(None)


def assigned(qids, *reviewers, role="review"):
    return [{"question_id": q, "reviewer": r, "role": role} for q in qids for r in reviewers]


def test_unassigned_goes_to_the_first_reviewer_assigned_to_both():
    q1, q2 = question("q1"), question("q2")
    ds = [decision(q1, "ann", "accept")]
    assert [q["question_id"] for q in review_queue([q1, q2], ds, [], EXCLUDED, "bob")] == ["q2"]
    both = assigned(["q1", "q2"], "ann", "bob")
    assert [q["question_id"] for q in review_queue([q1, q2], ds, both, EXCLUDED, "bob")] == ["q1", "q2"]
    assert [q["question_id"] for q in review_queue([q1, q2], ds, both, EXCLUDED, "ann")] == ["q2"]
    assert review_queue([q1, q2], ds, both, EXCLUDED, "cai") == []  # assigned items go to their reviewers only
    assert review_queue([q1, q2], ds, both[:2], EXCLUDED, "cai") == [q2]
    assert review_queue([question("q3", abbrev="SCM")], [], [], EXCLUDED, "ann") == []


def test_regenerated_question_returns_to_the_queue():
    q = question()
    ds = [decision(q, "ann", "accept")]
    assert review_queue([q], ds, [], EXCLUDED, "ann") == []
    new = question(question_text="Who speaks here?")
    assert [x["question_id"] for x in review_queue([new], ds, [], EXCLUDED, "ann")] == ["q1"]


def test_adjudication_is_for_a_third_person():
    q = question()
    ds = [decision(q, "ann", "accept"), decision(q, "bob", "reject", reason="bad_track")]
    assert [r["question_id"] for r in adjudication_list([q], ds, [], EXCLUDED)] == ["q1"]
    assert adjudication_list([q], ds, [], EXCLUDED, "ann") == []
    assert len(adjudication_list([q], ds, [], EXCLUDED, "cai")) == 1
    named = assigned(["q1"], "dan", role="adjudicate")
    assert adjudication_list([q], ds, named, EXCLUDED, "cai") == [] and len(adjudication_list([q], ds, named, EXCLUDED, "dan")) == 1


def test_shown_order_is_shuffled_and_stable():
    q = question()
    orders = {tuple(shown_order(q, r)) for r in ("ann", "bob", "cai", "dan")}
    assert all(sorted(o) == ["A", "B", "C"] and list(o) != ["A", "B", "C"] for o in orders)
    assert shown_order(q, "ann") == shown_order(q, "ann")


def test_annotation_queue_one_item_per_target():
    hc = {**question("q4", abbrev="HC"), "status": "awaiting_annotation", "target_track_ids": []}
    ast = {**question("q5", abbrev="AST"), "status": "awaiting_annotation", "target_track_ids": [2]}
    tsa = {**question("q6", abbrev="TSA"), "status": "awaiting_annotation", "target_track_ids": [2]}
    items = annotation_queue([hc, ast, tsa], [])
    assert [(i["kind"], i["tasks"]) for i in items] == [("action", ["AST", "TSA"]), ("count", ["HC"])]
    done = [{"video_id": "clip1", "kind": "action", "track_id": 2}]
    assert [i["kind"] for i in annotation_queue([hc, ast, tsa], done)] == ["count"]


def test_kappa_matches_scikit_learn_and_accuracy_counts_blind_choices():
    qs = [question(f"q{i}", answer="ABC"[i % 3]) for i in range(6)]
    a_picks, b_picks = list("ABCABC"), list("ABCACB")
    ds = []
    for q, a, b in zip(qs, a_picks, b_picks):
        ds.append(decision(q, "ann", "accept" if a == q["answer"] else "correct", blind_choice=a,
                           **({} if a == q["answer"] else {"corrected_answer": a})))
        ds.append(decision(q, "bob", "accept" if b == q["answer"] else "correct", blind_choice=b,
                           **({} if b == q["answer"] else {"corrected_answer": b})))
    rows = kappa_table(qs, ds, "blind")
    assert [r["task"] for r in rows] == ["Active_Speaker_Detection", "all"] and rows[0]["items"] == 6
    assert rows[0]["kappa"] == pytest.approx(cohen_kappa_score(a_picks, b_picks), abs=1e-12)
    assert rows[0]["agreement"] == 4 / 6
    reviewed = curate(qs, ds, EXCLUDED)
    assert [r["state"] for r in reviewed].count("disputed") == 2
    acc = {r["reviewer"]: r for r in reviewer_accuracy(qs, ds, reviewed)}
    assert acc["ann"]["items"] == 4 and acc["ann"]["correct"] == 4 and acc["bob"]["correct"] == 4
    assert human_baseline(acc.values()) == {"Active_Speaker_Detection": 1.0}


def _sklearn_kappa(xs, ys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined cases warn and give nan
        k = float(cohen_kappa_score(xs, ys))
    return None if math.isnan(k) else k


@pytest.mark.parametrize("xs,ys", [
    (list("ABCABC"), list("ABCACB")),  # the case above
    (list("ABCD"), list("ABCD")),  # perfect agreement, four labels
    (list("AAAA"), list("BBBB")),  # each rater constant, never agreeing: kappa 0
    (list("AAAB"), list("AAAA")),  # one rater constant
    (list("AB"), list("CD")),  # no label in common
    (list("AAAB"), list("AAAB")),
    (["keep|A|None", "reject", "keep|B|a red shirt", "reject"], ["keep|A|None", "reject", "keep|B|None", "keep|A|None"]),
    (list("AAAA"), list("AAAA")),  # one label only: undefined
    (["A"], ["B"]),  # one item
])
def test_kappa_equals_scikit_learn_on_hand_cases(xs, ys):
    ours, theirs = cohen_kappa(xs, ys), _sklearn_kappa(xs, ys)
    assert (ours is None and theirs is None) or ours == pytest.approx(theirs, abs=1e-12), (ours, theirs)
    assert cohen_kappa([], []) is None


def test_kappa_table_equals_scikit_learn_on_every_pair_of_a_team():
    """Four reviewers with their own habits on 300 questions of three tasks, blind and verdict labels: every row's
    kappa (per task, pooled, each pair) equals scikit-learn's on the same labels."""
    rng = random.Random(7)
    tasks = [("ASD", "Active_Speaker_Detection"), ("ER", "Emotion_Recognition"), ("HC", "Human_Count")]
    qs, ds = [], []
    for i in range(300):
        abbrev, task = tasks[i % 3]
        q = question(f"q{i}", abbrev=abbrev, task=task, answer="ABC"[rng.randrange(3)])
        qs.append(q)
        for who, skill in (("ann", 0.9), ("bob", 0.7), ("cai", 0.5), ("dan", 0.0 if abbrev == "HC" else 0.8)):
            if rng.random() < 0.2:
                continue  # not everyone reviews everything
            pick = q["answer"] if rng.random() < skill else "ABC"[rng.randrange(3)]
            if who == "dan" and abbrev == "HC":
                pick = "A"  # a constant rater
            if rng.random() < 0.1:
                ds.append(decision(q, who, "reject", blind_choice=pick, reason="ambiguous"))
            elif pick == q["answer"]:
                ds.append(decision(q, who, "accept", blind_choice=pick))
            else:
                ds.append(decision(q, who, "correct", blind_choice=pick, corrected_answer=pick))
    checked = 0
    for on in ("blind", "verdict"):
        for r in kappa_table(qs, ds, on):
            theirs = _sklearn_kappa(r["labels_a"], r["labels_b"])
            assert (r["kappa"] is None and theirs is None) or r["kappa"] == pytest.approx(theirs, abs=1e-12), r
            checked += 1
    assert checked == 2 * 4 * 6  # (3 tasks + pooled) x 6 pairs, blind and verdict


def test_tokens_are_hashed_and_revocable(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    token = create_token(wh, "ann")
    assert reviewer_for(wh, token) == "ann" and reviewer_for(wh, token + "x") is None and reviewer_for(wh, "") is None
    assert token not in str(wh.rows(REVIEWER_TOKENS))
    assert revoke_token(wh, "ann") and reviewer_for(wh, token) is None
    assert requires_token("0.0.0.0") and requires_token("192.168.1.5") and not requires_token("127.0.0.1")
    assert not requires_token("localhost")
