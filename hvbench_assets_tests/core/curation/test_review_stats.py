"""Time per decision, too-fast decisions, the no-edit share beside the paper's, and leases in the warehouse."""

from __future__ import annotations

import threading

from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.review_stats import PAPER_NO_EDIT, decision_times, fast_decisions, is_fast, no_edit_shares
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.warehouse import Warehouse


def d(reviewer, abbrev, spent, watched=None, video="v1", qid="q"):
    return {"reviewer": reviewer, "abbrev": abbrev, "seconds_spent": spent, "watched_s": watched, "video_id": video,
            "question_id": qid, "created_at": "2026-01-01", "action": "accept"}


def test_fast_means_quicker_than_the_clip_or_the_floor_with_the_video_unplayed():
    assert is_fast(d("a", "ER", 0.17, 0), duration_s=12.0)
    assert not is_fast(d("a", "ER", 0.17, 1.5), duration_s=12.0)  # it played
    assert not is_fast(d("a", "ER", 6.0, 0), duration_s=12.0)  # over the 5 s floor
    assert not is_fast(d("a", "ER", 2.5, 0), duration_s=2.0)  # the whole 2 s clip could have been watched
    assert is_fast(d("a", "ER", 1.0, None), duration_s=None)  # no watched time sent: unplayed
    assert not is_fast(d("a", "ER", None, 0), duration_s=3.0)  # no time spent sent: not judged


def test_median_seconds_per_reviewer_and_task():
    rows = decision_times([d("ann", "ER", 10), d("ann", "ER", 30), d("ann", "ER", 0.2, 0), d("bob", "HC", 4, 2)],
                          {"v1": 20.0})
    assert rows == [{"reviewer": "ann", "abbrev": "ER", "decisions": 3, "median_s": 10, "fast": 1},
                    {"reviewer": "bob", "abbrev": "HC", "decisions": 1, "median_s": 4, "fast": 0}]
    assert [x["seconds_spent"] for x in fast_decisions([d("ann", "ER", 0.2, 0), d("ann", "ER", 9, 0)], {"v1": 20.0})] == [0.2]


def test_no_edit_share_counts_option_corrections_as_no_edit():
    descriptive = [f.abbrev for f in TASKS if f.descriptive]
    assert sorted(descriptive) == sorted(PAPER_NO_EDIT)
    reviewed = [{"abbrev": "ER", "state": "accepted", "options": []},
                {"abbrev": "ER", "state": "corrected", "options": [{"letter": "B", "origin": "model"}]},
                {"abbrev": "ER", "state": "corrected", "options": [{"letter": "B", "origin": "review"}]},
                {"abbrev": "ER", "state": "rejected", "options": []},
                {"abbrev": "ER", "state": "unreviewed", "options": []},
                {"abbrev": "HC", "state": "accepted", "options": []}]
    rows = {r["abbrev"]: r for r in no_edit_shares(reviewed, [d("ann", "ER", 40), d("bob", "ER", 60)], descriptive)}
    assert rows["ER"]["settled"] == 4 and rows["ER"]["no_edit"] == 2 and rows["ER"]["share"] == 0.5
    assert rows["ER"]["paper_share"] == 0.81 and rows["ER"]["median_s"] == 50
    assert rows["BTA"]["share"] is None and "HC" not in rows
    assert rows["all"]["paper_share"] == 0.723 and rows["all"]["paper_median_s"] == 180


def test_leases_in_the_warehouse_hand_one_item_to_one_reviewer(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    items = [{"question_id": f"q{i}"} for i in range(3)]
    got, gate = {}, threading.Barrier(3)

    def ask(who):
        gate.wait()
        got[who] = leases.take(wh, who, "review", items, lambda i: True)[0]["question_id"]

    threads = [threading.Thread(target=ask, args=(w,)) for w in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got.values()) == ["q0", "q1", "q2"]
    assert leases.take(wh, "d", "review", items, lambda i: True) == (None, 0)
    assert leases.take(wh, "d", "review", items, lambda i: False)[0] == items[0]  # assigned items need no lease
    assert leases.take(wh, "a", "adjudicate", items, lambda i: True)[0] == items[0]  # queues are apart
    leases.release(wh, "a", "review")
    assert leases.take(wh, "d", "review", items, lambda i: True)[0]["question_id"] == got["a"]


def test_a_lapsed_lease_frees_the_item(tmp_path):
    wh = Warehouse(tmp_path / "wh.duckdb")
    items = [{"question_id": "q0"}]
    assert leases.take(wh, "a", "review", items, lambda i: True, minutes=0.0)[0] == items[0]
    assert leases.take(wh, "b", "review", items, lambda i: True)[0] == items[0]
