"""A reviewer's counters from the queue rules and the decisions alone: after a decision, an undo (the decision is
gone from the store), a rejection, another reviewer's lease and an adjudication."""

from __future__ import annotations

from hvbench_assets.core.curation.progress import Progress, progress
from hvbench_assets.core.curation.queue import adjudication_list, review_queue
from hvbench_assets.core.curation.state import excluded_tasks
from hvbench_assets_tests.core.curation.test_state import decision, question

EXCLUDED = excluded_tasks(None)


def review_counts(questions, decisions, reviewer, held=()):
    queue = review_queue(questions, decisions, [], EXCLUDED, reviewer)
    return progress(reviewer, queue, decisions, adjudicating=False, held_by_others=held)


def test_review_counts_follow_decisions_undo_and_rejection():
    qs = [question(f"q{i}") for i in range(40)]
    assert review_counts(qs, [], "ann") == Progress(done=0, left=40)
    ds = [decision(q, "ann", "accept", blind_choice="B") for q in qs[:9]]
    assert review_counts(qs, ds, "ann") == Progress(done=9, left=31)
    # undo moves the 9th decision out of review_decisions: its question is back and no longer done
    assert review_counts(qs, ds[:8], "ann") == Progress(done=8, left=32)
    rejected = ds[:8] + [decision(qs[8], "ann", "reject", reason="bad_track")]
    assert review_counts(qs, rejected, "ann") == Progress(done=9, left=31)
    # another reviewer sees what ann left; two items leased by someone else are not open to him
    assert review_counts(qs, rejected, "bob", held={"q20", "q21"}) == Progress(done=0, left=29)


def test_a_second_decision_on_one_question_counts_once():
    q = question()
    ds = [decision(q, "ann", "accept", blind_choice="B"), decision(q, "ann", "reject", reason="ambiguous")]
    assert review_counts([q], ds, "ann") == Progress(done=1, left=0)


def test_adjudication_counts_apart_from_reviews():
    qs = [question(f"q{i}") for i in range(3)]
    ds = [d for q in qs for d in (decision(q, "ann", "accept"), decision(q, "bob", "reject", reason="bad_track"))]

    def adjudication_counts(decisions):
        queue = adjudication_list(qs, decisions, [], EXCLUDED, "cai")
        return progress("cai", queue, decisions, adjudicating=True)

    assert adjudication_counts(ds) == Progress(done=0, left=3)
    settled = ds + [decision(qs[0], "cai", "adjudicate", corrected_answer="B")]
    assert adjudication_counts(settled) == Progress(done=1, left=2)
    assert adjudication_counts(ds) == Progress(done=0, left=3)  # the adjudication undone
    # cai's adjudications are not reviews: his review counter is untouched
    assert progress("cai", [], settled, adjudicating=False) == Progress(done=0, left=0)
