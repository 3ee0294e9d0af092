"""Who may write, and which files the review app serves, on real task-layer questions."""

from __future__ import annotations

import httpx
import pytest
from starlette.testclient import TestClient

from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.curation.tokens import create_token, requires_token, revoke_token
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets_tests.conftest import SHARED_VIDEOS
from hvbench_assets_tests.review.harness import review_server


@pytest.fixture(scope="module")
def setup(two_clips, two_clips_built):
    wh = Warehouse(two_clips / "wh.duckdb")

    def client(require_token: bool) -> TestClient:
        cfg = ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data", require_token=require_token,
                           roots=(SHARED_VIDEOS, two_clips_built / "data"))
        return TestClient(create_app(cfg), base_url="http://127.0.0.1", follow_redirects=False)

    asd = wh.rows(QUESTIONS, abbrev="ASD")[0]
    return wh, client, asd


def accept(q):
    return {"question_id": q["question_id"], "content_hash": question_content_hash(q), "action": "accept",
            "blind_choice": q["answer"]}


def test_off_loopback_every_write_needs_a_valid_token(setup):
    wh, client, asd = setup
    assert requires_token("0.0.0.0") and requires_token("10.1.2.3") and not requires_token("127.0.0.1")
    c = client(require_token=True)
    token = create_token(wh, "ann")
    assert c.post("/api/decisions", json=accept(asd)).status_code == 401
    assert c.post("/api/decisions", json=accept(asd), headers={"Authorization": "Bearer not-a-token"}).status_code == 401
    c.cookies.set("hvbench_reviewer", "ann")  # a typed name is no identity when tokens are required
    assert c.post("/api/decisions", json=accept(asd)).status_code == 401
    assert c.post("/api/annotations", json={"question_id": asd["question_id"], "count": 3}).status_code == 401
    assert c.post("/api/reveal", json={"question_id": asd["question_id"]}).status_code == 401
    assert c.get(f"/media/{asd['question_id']}").status_code == 401
    assert c.get("/review").status_code == 303 and c.get("/review").headers["location"].startswith("/login")
    assert decisions(wh) == []
    ok = c.post("/api/decisions", json=accept(asd), headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200 and decisions(wh)[-1]["reviewer"] == "ann"
    assert c.post("/login", json={"token": "wrong"}).status_code == 401
    assert c.post("/login", json={"token": token}).status_code == 200  # sets the HttpOnly token cookie
    again = c.post("/api/decisions", json=accept(asd))
    assert again.status_code == 200 and again.json()["duplicate"]  # the same decision again is stored once
    revoke_token(wh, "ann")
    assert c.post("/api/decisions", json=accept(asd)).status_code == 401
    assert len(decisions(wh)) == 1


def test_form_posts_are_refused(setup):
    _, client, asd = setup
    c = client(require_token=False)
    c.post("/login", json={"name": "bob"})
    r = c.post("/api/decisions", content=f"question_id={asd['question_id']}&action=accept",
               headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415  # a cross-site form cannot post JSON without a preflight


def test_served_cli_with_tokens_refuses_a_write_without_one(two_clips, two_clips_built, setup):
    wh, _, asd = setup
    token = create_token(wh, "cai")
    with review_server(two_clips, "--require-token", media_roots=(two_clips_built / "data",)) as url:
        assert httpx.post(url + "/api/decisions", json=accept(asd)).status_code == 401
        r = httpx.post(url + "/api/decisions", json=accept(asd), headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and decisions(wh)[-1]["reviewer"] == "cai"


@pytest.mark.parametrize("bad", ["..%2F..%2Fetc%2Fpasswd", "..%2Fwh.duckdb", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                                 "q000000000000000", "qa2bb1ae8e431813%2F..%2F..%2Fwh.duckdb", "%2Fetc%2Fpasswd"])
def test_path_traversal_ids_are_refused(setup, bad):
    _, client, _ = setup
    r = client(require_token=False).get("/media/" + bad)
    assert r.status_code in (400, 404) and b"root:" not in r.content and not r.content.startswith(b"DUCK")


def test_a_stored_path_outside_the_allowed_folders_is_refused(setup, tmp_path):
    wh, client, asd = setup
    c = client(require_token=False)
    assert c.get(f"/media/{asd['question_id']}", headers={"Range": "bytes=0-99"}).status_code == 206
    secret = tmp_path / "secret.mp4"
    secret.write_bytes(b"not for reviewers")
    wh.execute("UPDATE questions SET video_path = ? WHERE question_id = ?", [str(secret), asd["question_id"]])
    try:
        r = c.get(f"/media/{asd['question_id']}")
        assert r.status_code == 404 and "outside the data folder" in r.json()["error"]
    finally:
        wh.execute("UPDATE questions SET video_path = ? WHERE question_id = ?", [asd["video_path"], asd["question_id"]])


def test_without_tokens_only_loopback_host_names_are_served(setup):
    _, client, asd = setup
    c = client(require_token=False)
    assert c.get("/").status_code == 200
    rebound = c.get("/", headers={"Host": "evil.example:8765"})  # DNS rebinding: another site's name on 127.0.0.1
    assert rebound.status_code == 400
    c.post("/login", json={"name": "eve"})
    assert c.post("/api/decisions", json=accept(asd), headers={"Host": "evil.example"}).status_code == 400
