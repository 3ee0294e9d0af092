"""The counters the review app sends with each item, over HTTP on real questions (cloned to a queue of 12): right
after decisions, an undo, a rejection, a skip, another reviewer's lease and an adjudication, and equal to what
a reload shows. The questions list names each question by its text and task."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets_tests.conftest import SHARED_VIDEOS
from hvbench_assets_tests.review.harness import clone_questions

QUEUE = 12


@pytest.fixture(scope="module")
def review(two_clips, two_clips_built):
    wh = Warehouse(two_clips / "wh.duckdb")
    clone_questions(wh, QUEUE)
    app = create_app(ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data",
                                  excluded=frozenset(), roots=(SHARED_VIDEOS, two_clips_built / "data")))

    def as_(name: str) -> TestClient:
        c = TestClient(app, base_url="http://127.0.0.1")
        assert c.post("/login", json={"name": name}).status_code == 200
        return c

    return as_, {q["question_id"]: q for q in wh.rows(QUESTIONS)}


def counts(item):
    return item["done"], item["remaining"]


def pick(c, q, **extra):
    body = {"question_id": q["question_id"], "content_hash": question_content_hash(q), "action": "pick",
            "blind_choice": q["answer"], **extra}
    out = c.post("/api/decisions", json=body)
    assert out.status_code == 200, out.text
    return out.json()


def test_counts_after_decisions_undo_rejection_skip_and_a_lease(review):
    as_, qs = review
    ann = as_("ann")
    item = ann.get("/api/next/review").json()["item"]
    assert counts(item) == (0, QUEUE)
    last = None
    for i in range(1, 4):
        last = pick(ann, qs[item["question_id"]])
        item = last["next"]
        assert counts(item) == (i, QUEUE - i)
    undone = ann.post("/api/undo", json={"decision_id": last["decision_id"]}).json()["item"]
    assert counts(undone) == (2, QUEUE - 2)  # the undone question is left again, and not done
    assert counts(ann.get("/api/next/review").json()["item"]) == counts(undone)  # what a reload shows
    rejected = ann.post("/api/decisions", json={
        "question_id": undone["question_id"], "content_hash": undone["content_hash"], "action": "reject",
        "reason": "bad_track"}).json()
    item = rejected["next"]
    assert counts(item) == (3, QUEUE - 3)
    skipped = ann.get(f"/api/next/review?skip={item['question_id']}").json()["item"]
    assert skipped["question_id"] != item["question_id"] and counts(skipped) == (3, QUEUE - 3)  # skipped is still left
    bob = as_("bob").get("/api/next/review").json()["item"]  # bob leases an item: not open to ann meanwhile
    assert bob["question_id"] != skipped["question_id"] and counts(bob) == (0, QUEUE - 4)
    assert counts(ann.get(f"/api/next/review?skip={item['question_id']}").json()["item"]) == (3, QUEUE - 4)


def test_counts_after_an_adjudication_and_its_undo(review):
    as_, qs = review
    disputed = sorted(qs)[:2]
    for qid in disputed:  # lea accepts, max rejects: two disputes for a third person
        pick(as_("lea"), qs[qid])
        as_("max").post("/api/decisions", json={"question_id": qid, "content_hash": question_content_hash(qs[qid]),
                                                "action": "reject", "reason": "ambiguous"})
    cai = as_("cai")
    item = cai.get("/api/next/adjudicate").json()["item"]
    assert counts(item) == (0, 2)
    q = qs[item["question_id"]]
    out = cai.post("/api/decisions", json={"question_id": q["question_id"], "content_hash": question_content_hash(q),
                                           "action": "adjudicate", "corrected_answer": q["answer"]}).json()
    assert counts(out["next"]) == (1, 1)
    again = cai.post("/api/undo", json={"decision_id": out["decision_id"]}).json()["item"]
    assert again["question_id"] == q["question_id"] and counts(again) == (0, 2)


def test_the_questions_list_shows_each_question_and_its_task(review):
    as_, qs = review
    page = as_("ann").get("/questions").text
    for q in qs.values():
        if q.get("question"):
            text = q["question"] if len(q["question"]) <= 90 else q["question"][:80]
            assert text in page and q["task"] in page, q["question_id"]


def test_a_skipped_annotation_item_is_still_left(review, two_clips):
    """The annotation queue counts like the review queue: an item skipped for now is still left to annotate."""
    as_, _ = review
    c = as_("dee")
    first = c.get("/api/next/annotate").json()["item"]
    assert first is not None  # the two clips' TSA waits for an annotation
    wh = Warehouse(two_clips / "wh.duckdb")
    for n in range(2):  # two more items like it
        wh.execute("INSERT INTO questions SELECT * REPLACE (? AS question_id) FROM questions WHERE question_id = ?",
                   [f"a{n:015x}", first["question_id"]])
    c = as_("eve")
    item = c.get("/api/next/annotate").json()["item"]
    left = item["remaining"]
    assert left == 2  # the two copies; dee holds the first one's lease
    after = c.get(f"/api/next/annotate?skip={item['question_id']}").json()["item"]
    assert after["question_id"] != item["question_id"] and after["remaining"] == left
