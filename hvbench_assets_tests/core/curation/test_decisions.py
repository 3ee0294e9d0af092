"""The review app's decision rules without HTTP (core/curation/decisions.py): who may decide what, the blind pick
that accepts, who may settle a dispute, and which item comes next; each case worked out by hand."""

from __future__ import annotations

from hvbench_assets.core.curation.decisions import (ADJUDICATE, ASSIGNED, FLAGGED, OPEN, REVIEW, assigned_to,
                                                    first_open, may_adjudicate, pick_accepts, queue_of, review_part,
                                                    rule)
from hvbench_assets.core.curation.queue import review_queue
from hvbench_assets.core.curation.state import curate, excluded_tasks
from hvbench_assets_tests.core.curation.test_state import decision, question

DISPUTED = {"state": "disputed", "reviewers": ["ann", "bob"]}


def test_anyone_may_accept_correct_or_reject_any_question_assigned_or_not():
    for action in ("accept", "correct", "reject"):
        for state in (None, DISPUTED, {"state": "accepted", "reviewers": ["ann"]}):
            ruling = rule("cai", action, "q1", state=state, adjudicators={"dan"})
            assert (ruling.action, ruling.refused, ruling.reveal, ruling.next_queue) == (action, None, False, REVIEW)


def test_a_blind_pick_of_the_proposed_answer_accepts_except_on_a_flagged_question():
    assert pick_accepts("B", "B", flagged=False)
    assert not pick_accepts("B", "B", flagged=True)  # a second look first: the models' answers are shown
    assert not pick_accepts("C", "B", flagged=False) and not pick_accepts(None, "B", flagged=False)
    accepted = rule("ann", "pick", "q1", blind_choice="B", answer="B")
    assert (accepted.action, accepted.reveal, accepted.next_queue) == ("accept", False, REVIEW)
    for ruling in (rule("ann", "pick", "q1", blind_choice="C", answer="B"),
                   rule("ann", "pick", "q1", blind_choice="B", answer="B", flagged=True)):
        assert (ruling.action, ruling.reveal, ruling.refused) == (None, True, None)  # nothing stored: reveal


def test_a_dispute_needs_a_third_person():
    assert not may_adjudicate("ann", DISPUTED, None) and not may_adjudicate("bob", DISPUTED, None)
    assert may_adjudicate("cai", DISPUTED, None)
    refused = rule("ann", ADJUDICATE, "q1", state=DISPUTED)
    assert refused.action is None and refused.refused == "ann may not adjudicate q1: not disputed, or ann reviewed it"
    settled = rule("cai", ADJUDICATE, "q1", state=DISPUTED)
    assert (settled.action, settled.refused, settled.next_queue) == (ADJUDICATE, None, ADJUDICATE)


def test_only_a_disputed_question_is_adjudicated():
    for state in (None, {"state": "accepted", "reviewers": ["ann"]}, {"state": "unreviewed", "reviewers": []}):
        assert not may_adjudicate("cai", state, None) and rule("cai", ADJUDICATE, "q1", state=state).refused


def test_named_adjudicators_alone_settle_their_disputes():
    assignments = [{"question_id": "q1", "reviewer": "dan", "role": "adjudicate"},
                   {"question_id": "q1", "reviewer": "ann", "role": "review"},
                   {"question_id": "q2", "reviewer": "bob"}]  # no role: a review assignment
    assert assigned_to(assignments, ADJUDICATE) == {"q1": {"dan"}}
    assert assigned_to(assignments, REVIEW) == {"q1": {"ann"}, "q2": {"bob"}}
    named = assigned_to(assignments, ADJUDICATE)["q1"]
    assert may_adjudicate("dan", DISPUTED, named) and not may_adjudicate("cai", DISPUTED, named)
    assert not may_adjudicate("ann", DISPUTED, {"ann"})  # named, but one of its reviewers


def test_an_undo_or_a_decision_goes_back_to_its_own_queue():
    assert queue_of(ADJUDICATE) == ADJUDICATE
    assert [queue_of(a) for a in ("accept", "correct", "reject", "pick")] == [REVIEW] * 4


def test_where_a_question_sits_in_a_reviewers_queue():
    assert review_part("ann", "unreviewed", {"ann"}, flagged=False, decided=False) == ASSIGNED
    assert review_part("ann", "unreviewed", {"bob"}, flagged=False, decided=False) is None  # someone else's
    assert review_part("ann", "disputed", {"ann"}, flagged=False, decided=False) is None  # waits for adjudication
    assert review_part("ann", "unreviewed", None, flagged=False, decided=False) == OPEN
    assert review_part("ann", "accepted", None, flagged=False, decided=False) is None
    assert review_part("ann", "unreviewed", None, flagged=False, decided=True) is None
    # a flagged question goes to anyone, whatever its state and earlier decisions, unless it waits for adjudication
    assert review_part("ann", "accepted", {"bob"}, flagged=True, decided=True) == FLAGGED
    assert review_part("ann", "disputed", None, flagged=True, decided=False) is None


def test_the_next_item_is_assigned_first_then_flagged_then_the_queue_order():
    qs = [question(f"q{i}") for i in range(1, 6)]
    for q, clip in zip(qs, ("c5", "c4", "c3", "c2", "c1")):
        q["video_id"] = clip  # the queue's order within a part: task, clip, id
    assignments = [{"question_id": "q1", "reviewer": "ann", "role": "review"}]
    decisions = [decision(qs[1], "bob", "accept")]  # q2 accepted: back only through its flag
    states = {r["question_id"]: r for r in curate(qs, decisions, excluded_tasks(None), assignments)}
    queue = review_queue(qs, decisions, assignments, excluded_tasks(None), "ann", states=states,
                         flagged={"q2": [{}], "q4": [{}]})
    assert [q["question_id"] for q in queue] == ["q1", "q4", "q2", "q5", "q3"]


def test_the_next_item_skips_what_another_reviewer_holds_unless_it_needs_no_lease():
    items = [{"question_id": "q1"}, {"question_id": "q2"}, {"question_id": "q3"}]
    assert first_open(items, set(), lambda i: True) == (items[0], 3)
    assert first_open(items, {"q1"}, lambda i: True) == (items[1], 2)
    assert first_open(items, {"q1"}, lambda i: i["question_id"] != "q1") == (items[0], 3)  # assigned: no lease
    assert first_open(items, {"q1", "q2", "q3"}, lambda i: True) == (None, 0)
