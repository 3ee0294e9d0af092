"""Keyboard only, in the system chromium: the counter right after decisions and an undo, and the status line of
the last action gone at the next key (issue 51: "8 done · 1 left" after an undo, "undone" staying)."""

from __future__ import annotations

import pytest

from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.review.harness import (chromium_or_skip, clone_questions, current_qid, option_key, review_server,
                                                wait_after)

pytestmark = pytest.mark.slow
SHOWN = "() => !document.getElementById('item').hidden || !document.getElementById('empty').hidden"
QUEUE = 12


def test_counter_after_undo_and_the_status_line_clears_on_the_next_key(two_clips, two_clips_built):
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    wh = Warehouse(two_clips / "wh.duckdb")
    clone_questions(wh, QUEUE)
    by_id = {q["question_id"]: q for q in wh.rows(QUESTIONS)}
    with review_server(two_clips, media_roots=(two_clips_built / "data",)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        page = browser.new_context().new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.fill("#name", "kim")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=Review queue")
        page.goto(url + "/review")
        page.wait_for_function(SHOWN)

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
        browser.close()
