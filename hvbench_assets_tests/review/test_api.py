"""The review app's JSON API on real questions: annotation variants, stale versions, who may adjudicate."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets_tests.conftest import SHARED_VIDEOS


@pytest.fixture(scope="module")
def api(two_clips, two_clips_built):
    cfg = ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data",
                       roots=(SHARED_VIDEOS, two_clips_built / "data"))
    app = create_app(cfg)
    wh = Warehouse(two_clips / "wh.duckdb")

    def as_(name: str) -> TestClient:
        c = TestClient(app, base_url="http://127.0.0.1")
        assert c.post("/login", json={"name": name}).status_code == 200
        return c

    return wh, as_, {q["abbrev"]: q for q in wh.rows(QUESTIONS)}


def test_action_annotations_ongoing_none_and_refusals(api):
    wh, as_, qs = api
    c = as_("ann")
    tsa, hc, asd = qs["TSA"], qs["HC"], qs["ASD"]
    assert c.post("/api/annotations", json={"question_id": tsa["question_id"], "action": "waves"}).status_code == 400
    assert c.post("/api/annotations", json={"question_id": hc["question_id"], "count": 0}).status_code == 400
    assert c.post("/api/annotations", json={"question_id": asd["question_id"], "count": 2}).status_code == 400
    r = c.post("/api/annotations", json={"question_id": tsa["question_id"], "ongoing": True, "action": "braids hair"})
    assert r.status_code == 200
    c.post("/api/annotations", json={"question_id": tsa["question_id"], "none": True})
    values = [a["value"] for a in wh.rows(ANNOTATIONS, order_by="created_at")]
    assert values == [{"ongoing": True, "action": "braids hair"}, {"none": True}]
    assert {a["track_id"] for a in wh.rows(ANNOTATIONS)} == {int(tsa["target_track_ids"][0])}


def test_a_decision_on_an_old_version_is_refused(api):
    wh, as_, qs = api
    asd = qs["ASD"]
    r = as_("ann").post("/api/decisions", json={"question_id": asd["question_id"], "content_hash": "0" * 16,
                                                "action": "accept"})
    assert r.status_code == 409 and "changed since" in r.json()["error"]
    r = as_("ann").post("/api/reveal", json={"question_id": asd["question_id"], "content_hash": "0" * 16})
    assert r.status_code == 409


def test_only_a_third_person_adjudicates(api):
    wh, as_, qs = api
    avad = qs["AVAD"]
    base = {"question_id": avad["question_id"], "content_hash": question_content_hash(avad)}
    assert as_("ann").post("/api/decisions", json={**base, "action": "accept"}).status_code == 200
    assert as_("bob").post("/api/decisions", json={**base, "action": "reject", "reason": "ambiguous"}).status_code == 200
    refused = as_("bob").post("/api/decisions", json={**base, "action": "adjudicate", "reason": "ambiguous"})
    assert refused.status_code == 403
    item = as_("cai").get("/api/next/adjudicate").json()["item"]
    assert item["question_id"] == avad["question_id"] and set(item["votes"]) == {"ann", "bob"}
    ok = as_("cai").post("/api/decisions", json={**base, "action": "adjudicate", "corrected_answer": avad["answer"]})
    assert ok.status_code == 200 and ok.json()["next"] is None
    assert [d["action"] for d in decisions(wh, question_id=avad["question_id"])] == ["accept", "reject", "adjudicate"]


def test_unnamed_writes_are_refused_locally_too(api):
    _, _, qs = api
    c = TestClient(create_app(ReviewConfig(warehouse=api[0].path, data_dir=api[0].path.parent)), base_url="http://127.0.0.1")
    r = c.post("/api/decisions", json={"question_id": qs["ASD"]["question_id"], "action": "accept"})
    assert r.status_code == 401


def test_every_page_works_on_an_empty_warehouse(tmp_path):
    c = TestClient(create_app(ReviewConfig(warehouse=tmp_path / "wh.duckdb", data_dir=tmp_path / "data")),
                   base_url="http://127.0.0.1")
    assert "Your name" in c.get("/").text
    c.post("/login", json={"name": "ann"})
    for path in ("/", "/review", "/annotate", "/adjudicate", "/agreement", "/questions"):
        assert c.get(path).status_code == 200, path
    assert "Nothing left to review" in c.get("/review").text
    assert c.get("/questions/q0123456789abcde").status_code == 404


def test_question_list_filters_by_state_and_task(api):
    _, as_, qs = api
    page = as_("ann").get("/questions?task=ASD").text
    assert qs["ASD"]["question_id"] in page and qs["AVAD"]["question_id"] not in page


def test_the_state_is_read_as_the_server_starts(api, two_clips):
    """The server reads the review state in the background at start; the first request uses it (no second read)."""
    app = create_app(ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        assert app.state.warmed.wait(120)
        assert app.state.live.loads["questions"] == 1 and app.state.live.loads["decisions"] <= 1
        assert c.post("/login", json={"name": "wu"}).status_code == 200
        assert c.get("/api/next/review").status_code == 200 and c.get("/").status_code == 200
        assert app.state.live.loads["questions"] == 1  # the requests read only what changed since (nothing)
