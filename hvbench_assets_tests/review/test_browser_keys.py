"""Keyboard only, in the system chromium: ten decisions of one key each on real questions (cloned under new
ids so the queue holds 30), the time from the key press to the next item painted (printed, recorded as a
property; no timing assertion), undo, a mouse-only rejection, and focus back on the page after every save."""

from __future__ import annotations

import statistics

import pytest

from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.curation.tables import UNDONE_DECISIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.review.harness import current_qid, option_key, review_page, wait_after

pytestmark = pytest.mark.slow
QUEUE = 30


def test_ten_one_key_decisions_undo_and_a_mouse_only_rejection(two_clips, two_clips_built, record_property):
    wh = Warehouse(two_clips / "wh.duckdb")
    with review_page(two_clips, two_clips_built, QUEUE) as (page, by_id, errors):
        assert page.inner_text("#guideline").strip() and "0 done" in page.inner_text("#progress-text")
        done = []
        for _ in range(10):
            qid = current_qid(page)
            page.keyboard.press(option_key(page, by_id[qid]["answer"]))  # the proposed answer: accepted at once
            wait_after(page, qid)
            assert page.evaluate("document.activeElement === document.body")
            done.append(qid)
        timings = page.evaluate("window.hvbenchTimings")
        assert len(timings) == 10
        assert "10 done" in page.inner_text("#progress-text")

        page.keyboard.press("u")  # undo: the last question comes back, blind
        page.wait_for_function("(q) => document.getElementById('qlink').href.endsWith(q)", arg=done[-1])
        assert page.is_hidden("#phase-reveal")
        assert [d["question_id"] for d in wh.rows(UNDONE_DECISIONS)] == [done[-1]]

        # mouse only: the reject button, then a reason
        page.click("#phase-blind button[data-key=r]")
        page.click("#reasons li[data-reason=bad_track]")
        wait_after(page, done[-1])
        assert page.evaluate("document.activeElement === document.body") and not errors
    ds = decisions(wh, reviewer="kim")
    assert [d["action"] for d in ds] == ["accept"] * 9 + ["reject"]
    assert all(d["blind_choice"] == by_id[d["question_id"]]["answer"] for d in ds[:9])
    assert all(d["watched_s"] is not None and d["seconds_spent"] > 0 for d in ds)
    median = statistics.median(timings)
    record_property("decision_to_next_item_ms", round(median, 1))
    print(f"\ndecision -> next item shown, keyboard only, {QUEUE} questions: median {median:.0f} ms "
          f"(min {min(timings):.0f}, max {max(timings):.0f}) over {len(timings)} decisions")
