"""A review team's day over HTTP on real task-layer questions: leases keep two reviewers off the same item,
a decision sent twice is stored once, one key accepts, undo takes a decision back, bodies and numbers are
checked before anything is stored, and the stats page shows time per decision and the no-edit share."""

from __future__ import annotations

import threading
import time

import pytest
from starlette.testclient import TestClient

from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.curation.tables import UNDONE_DECISIONS
from hvbench_assets.core.curation.tokens import create_token
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets_tests.conftest import SHARED_VIDEOS


@pytest.fixture(scope="module")
def ux(two_clips, two_clips_built):
    wh = Warehouse(two_clips / "wh.duckdb")

    def app(**kw):
        cfg = ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data", excluded=frozenset(),
                           roots=(SHARED_VIDEOS, two_clips_built / "data"), **kw)
        return create_app(cfg)

    default = app()

    def as_(name: str, application=None) -> TestClient:
        c = TestClient(application or default, base_url="http://127.0.0.1")
        assert c.post("/login", json={"name": name}).status_code == 200
        return c

    return wh, app, as_, {q["question_id"]: q for q in wh.rows(QUESTIONS)}


@pytest.fixture(autouse=True)
def no_leases(ux):
    """Each test starts with nobody holding an item (the warehouse has two reviewable questions: ASD, AVAD)."""
    if ux[0].has_table("review_leases"):
        ux[0].execute("DELETE FROM review_leases")


def base(q):
    return {"question_id": q["question_id"], "content_hash": question_content_hash(q)}


def in_parallel(*calls):
    out = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def run(i, call):
        gate.wait()
        out[i] = call()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_two_reviewers_asking_at_once_get_different_items(ux):
    wh, app, as_, qs = ux
    ann, bob = as_("lea"), as_("max")
    a, b = in_parallel(lambda: ann.get("/api/next/review").json()["item"],
                       lambda: bob.get("/api/next/review").json()["item"])
    assert a["question_id"] != b["question_id"]
    assert ann.get("/api/next/review").json()["item"]["question_id"] == a["question_id"]  # still hers
    # skipping hands the item back: the next reviewer may take it
    ann.get(f"/api/next/review?skip={a['question_id']}")
    assert as_("ned").get("/api/next/review").json()["item"]["question_id"] == a["question_id"]


def test_a_lease_lapses(ux):
    wh, app, as_, qs = ux
    short = app(lease_minutes=0.5 / 60)  # half a second
    one = as_("ola", short).get("/api/next/review").json()["item"]
    assert as_("pia", short).get("/api/next/review").json()["item"]["question_id"] != one["question_id"]
    time.sleep(0.6)
    assert as_("quo", short).get("/api/next/review").json()["item"]["question_id"] == one["question_id"]


def test_the_same_decision_sent_twice_in_parallel_is_stored_once(ux):
    wh, app, as_, qs = ux
    c = as_("ron")
    item = c.get("/api/next/review").json()["item"]
    q = qs[item["question_id"]]
    body = {**base(q), "action": "accept", "blind_choice": q["answer"], "request_id": "k1", "seconds_spent": 4.2}
    r1, r2 = in_parallel(lambda: c.post("/api/decisions", json=body), lambda: c.post("/api/decisions", json=body))
    assert r1.status_code == r2.status_code == 200
    assert r1.json()["decision_id"] == r2.json()["decision_id"] and {r1.json()["duplicate"], r2.json()["duplicate"]} == {True, False}
    assert len(decisions(wh, reviewer="ron")) == 1
    # without a key, an identical repeat of one's latest decision is not stored again either
    keyless = {k: v for k, v in body.items() if k != "request_id"}
    r3, r4 = in_parallel(lambda: c.post("/api/decisions", json=keyless), lambda: c.post("/api/decisions", json=keyless))
    assert r3.json()["duplicate"] and r4.json()["duplicate"] and len(decisions(wh, reviewer="ron")) == 1


def test_one_key_accepts_and_undo_takes_it_back(ux):
    wh, app, as_, qs = ux
    c = as_("sam")
    item = c.get("/api/next/review").json()["item"]
    q = qs[item["question_id"]]
    assert item["guideline"] == TASK_BY_ABBREV[q["abbrev"]].guideline and item["guideline"]
    assert item["done"] == 0 and item["remaining"] >= 1
    wrong = next(o["letter"] for o in q["options"] if o["letter"] != q["answer"])
    miss = c.post("/api/decisions", json={**base(q), "action": "pick", "blind_choice": wrong})
    assert miss.json() == {"stored": False, "answer": q["answer"], "answer_text": q["answer_text"]}
    assert decisions(wh, reviewer="sam") == []
    hit = c.post("/api/decisions", json={**base(q), "action": "pick", "blind_choice": q["answer"], "request_id": "x"}).json()
    assert hit["stored"] and hit["action"] == "accept"
    assert hit["next"] is None or (hit["next"]["question_id"] != q["question_id"] and hit["next"]["done"] == 1)
    stored = decisions(wh, reviewer="sam")
    assert [(d["action"], d["blind_choice"]) for d in stored] == [("accept", q["answer"])]
    assert as_("tom").post("/api/undo", json={"decision_id": hit["decision_id"]}).status_code == 409  # not his
    undone = c.post("/api/undo", json={"decision_id": hit["decision_id"]})
    assert undone.status_code == 200 and undone.json()["item"]["question_id"] == q["question_id"]
    assert decisions(wh, reviewer="sam") == []
    assert [r["decision_id"] for r in wh.rows(UNDONE_DECISIONS, reviewer="sam")] == [hit["decision_id"]]
    assert c.post("/api/undo", json={"decision_id": hit["decision_id"]}).status_code == 409  # once only
    # the same key again does not bring the undone decision back; a new one is stored
    again = c.post("/api/decisions", json={**base(q), "action": "pick", "blind_choice": q["answer"], "request_id": "x"})
    assert again.json()["duplicate"] and decisions(wh, reviewer="sam") == []
    c.post("/api/decisions", json={**base(q), "action": "pick", "blind_choice": q["answer"], "request_id": "y"})
    assert len(decisions(wh, reviewer="sam")) == 1


@pytest.mark.parametrize("field,value,message", [
    ("seconds_spent", "abc", "expected a number"), ("seconds_spent", -3, "outside"), ("seconds_spent", 1e12, "outside"),
    ("seconds_spent", True, "expected a number"), ("watched_s", "1e999", "finite"), ("watched_s", [1], "expected a number"),
    ("corrected_text", 5, "expected text"), ("shown_order", "ABCD", "shown_order"), ("question_id", {"a": 1}, "expected text"),
])
def test_bad_fields_get_400_with_a_reason(ux, field, value, message):
    wh, app, as_, qs = ux
    c = as_("uma")
    q = next(iter(qs.values()))
    before = len(decisions(wh))
    r = c.post("/api/decisions", json={**base(q), "action": "accept", field: value})
    assert r.status_code == 400 and message in r.json()["error"] and field in r.json()["error"]
    assert len(decisions(wh)) == before and c.get("/api/next/review").status_code == 200  # still serving


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_numbers(ux, raw):
    wh, app, as_, qs = ux
    c = as_("uma")
    q = next(iter(qs.values()))
    body = f'{{"question_id": "{q["question_id"]}", "action": "accept", "seconds_spent": {raw}}}'
    for path in ("/api/decisions", "/api/annotations"):
        r = c.post(path, content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "seconds_spent: expected a finite number" in r.json()["error"]


def test_a_large_body_is_refused_before_the_token_is_checked(ux):
    wh, app, as_, qs = ux
    guarded = TestClient(app(require_token=True, max_body_bytes=10_000), base_url="http://127.0.0.1")
    big = b'{"x": "' + b"a" * 50_000 + b'"}'
    r = guarded.post("/api/decisions", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "larger than 10000 bytes" in r.json()["error"]

    def chunks():  # no Content-Length: the size is unknown before reading, so it is refused unread
        for _ in range(50):
            yield b"a" * 1000

    r = guarded.post("/api/decisions", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 411
    # a small body without a token: 401 (the token is checked before the body is parsed)
    r = guarded.post("/api/decisions", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 401
    token = create_token(wh, "vic")
    ok = guarded.post("/api/decisions", content=b"{not json",
                      headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    assert ok.status_code == 400 and guarded.get("/static/review.css").status_code == 200


def test_stats_page_shows_time_per_decision_fast_decisions_and_no_edit_share(ux):
    wh, app, as_, qs = ux
    c = as_("wes")
    quick, slow = [q for q in qs.values() if q["question"] and q["answer"] and q["status"] != "awaiting_annotation"][:2]
    c.post("/api/decisions", json={**base(quick), "action": "accept", "seconds_spent": 0.17, "watched_s": 0})
    c.post("/api/decisions", json={**base(slow), "action": "accept", "seconds_spent": 0.3, "watched_s": 2.5})
    page = c.get("/agreement").text
    assert 'id="times"' in page and 'id="no-edit"' in page and "72.3 %" in page
    fast = page.split('id="fast"')[1].split("</details>")[0]
    assert quick["question_id"] in fast and slow["question_id"] not in fast
