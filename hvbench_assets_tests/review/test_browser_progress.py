"""Keyboard only, in the system chromium: the counter right after decisions and an undo, and the status line of
the last action gone at the next key (issue 51: "8 done · 1 left" after an undo, "undone" staying)."""

from __future__ import annotations

import pytest

from hvbench_assets_tests.review.harness import current_qid, option_key, review_page, wait_after

pytestmark = pytest.mark.slow
QUEUE = 12


def test_counter_after_undo_and_the_status_line_clears_on_the_next_key(two_clips, two_clips_built):
    with review_page(two_clips, two_clips_built, QUEUE) as (page, by_id, errors):

        def counter() -> str:
            return page.inner_text("#progress-text")

        assert counter() == f"0 done · {QUEUE} left"
        done = []
        for _ in range(3):
            qid = current_qid(page)
            page.keyboard.press(option_key(page, by_id[qid]["answer"]))  # the proposed answer: one key accepts
            wait_after(page, qid)
            done.append(qid)
        assert counter() == f"3 done · {QUEUE - 3} left" and page.inner_text("#remaining") == str(QUEUE - 3)
        assert page.inner_text("#status").startswith("saved: accept")

        page.keyboard.press("u")  # the last question comes back: one less done, one more left
        page.wait_for_function("(q) => document.getElementById('qlink').href.endsWith(q)", arg=done[-1])
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('undone')")
        assert counter() == f"2 done · {QUEUE - 2} left" and page.inner_text("#remaining") == str(QUEUE - 2)

        page.keyboard.press("r")  # the next key: a new step, and the undo's line is gone
        assert page.inner_text("#status") == "" and page.is_visible("#phase-reject")
        page.keyboard.press("Escape")
        qid = current_qid(page)
        page.keyboard.press(option_key(page, by_id[qid]["answer"]))
        wait_after(page, qid)
        assert counter() == f"3 done · {QUEUE - 3} left"
        page.keyboard.press("Space")  # any key clears the "saved" line, even play/pause
        assert page.inner_text("#status") == "" and not errors
