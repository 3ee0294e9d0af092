"""The grade queue over HTTP on real open-ended replies: `hvbench eval --format open` of two models with a judge
against the loopback server (testkit/open_answers.py), then people grade every reply in the review app, and the
report states the judge's and the matcher's agreement with them (counted by hand below)."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient

from hvbench_assets.core.curation.tables import HUMAN_GRADES
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets.testkit.open_answers import ITEMS, REPLIES, mc_export, open_evaluation

# what a person says of each reply (by its text); "Person 2 or 3" hedges: the grader cannot tell
HUMAN = {"There are three people.": "right", "from 3 to 7 seconds": "right", "Around second 5.": "right",
         "Person 2": "right", "She seems cheerful.": "right", "The person wears a red coat.": "right",
         "5": "wrong", "0:00 to 0:04": "wrong", "I cannot tell.": "wrong", "Person 2 or 3": "ungradable",
         "happy": "right", "Someone in a blue hat.": "wrong"}
REFERENCE = {q: opts["ABCDE".index(a)] for q, _, _, opts, a in ITEMS}


@pytest.fixture(scope="module")
def graded_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("grade")
    folder = mc_export(root / "data" / "benchmarks" / "mine", root)
    open_evaluation(folder, root / "wh.duckdb")
    return root


def client(root, name: str, lease_minutes: float = 10.0) -> TestClient:
    c = TestClient(create_app(ReviewConfig(warehouse=root / "wh.duckdb", data_dir=root / "data",
                                           lease_minutes=lease_minutes)), base_url="http://127.0.0.1")
    assert c.post("/login", json={"name": name}).status_code == 200
    return c


def test_grade_route_shows_what_the_judge_sees_stores_who_graded_and_feeds_the_report(graded_root):
    gil, hal = client(graded_root, "gil"), client(graded_root, "hal", lease_minutes=0.001)
    assert "12 open-ended model answer(s)" in gil.get("/").text
    first = gil.get("/api/grades/next").json()["item"]
    assert first["remaining"] == 12 and first["done"] == 0
    assert set(first) == {"reply_id", "reply_sha", "task", "abbrev", "question", "reference", "reply", "remaining", "done"}
    qid = next(q for q, _, question, _, _ in ITEMS if question == first["question"])
    assert first["reference"] == REFERENCE[qid] and first["reply"] in (REPLIES["good"][qid], REPLIES["poor"][qid])
    other = hal.get("/api/grades/next").json()["item"]
    assert other["reply_id"] != first["reply_id"]  # gil holds hers: hal gets the next one
    time.sleep(0.1)  # and walks away: his lease lapses, the reply is free again

    bad = {"reply_id": first["reply_id"], "reply_sha": first["reply_sha"]}
    assert gil.post("/api/grades", json={**bad, "verdict": "maybe"}).status_code == 400
    assert gil.post("/api/grades", json={**bad, "reply_sha": "0" * 16, "verdict": "right"}).status_code == 409
    assert gil.post("/api/grades", json={"reply_id": "rnothing", "verdict": "right"}).status_code == 404
    assert TestClient(gil.app, base_url="http://127.0.0.1").post("/api/grades", json={**bad, "verdict": "right"}
                                                                 ).status_code == 401  # nobody named

    item, seen, n = first, [], 0
    while item is not None:
        seen.append(item["reply_id"])
        body = {"reply_id": item["reply_id"], "reply_sha": item["reply_sha"], "verdict": HUMAN[item["reply"]],
                "request_id": f"k{n}", "seconds_spent": 3}
        out = gil.post("/api/grades", json=body).json()
        if n == 0:  # the same request again (a double key press): stored once
            assert gil.post("/api/grades", json=body).json()["duplicate"] is True
        assert out["stored"] and out["verdict"] == body["verdict"]
        item, n = out["next"], n + 1
        if item is not None:
            assert item["done"] == n and item["remaining"] == 12 - n
    assert len(seen) == len(set(seen)) == 12
    wh = Warehouse(graded_root / "wh.duckdb")
    grades = wh.rows(HUMAN_GRADES)
    assert len(grades) == 12 and {g["grader"] for g in grades} == {"gil"} and all(g["seconds_spent"] == 3 for g in grades)
    assert hal.get("/api/grades/next").json()["item"] is None and "0 open-ended" in hal.get("/").text

    data, _ = report_for(wh, "mine_open", store=False)
    section = next(md for md, _ in data.sections if md.startswith("## Open-ended grading"))
    # by hand. The judge: good all RIGHT but "cheerful" (people: right), poor WRONG but "happy" RIGHT and "Person 2 or
    # 3" undecided (people: cannot tell). The matcher grades good 5 (not h2t0), poor hc0, atd0, er0; all as people do.
    assert "| good | 6 | 100.0 | 5 | 1 | 0 | 80.0 (4/5) | 6 | 83.3 (5/6) | 100.0 (5/5) |" in section
    assert "| poor | 6 | 16.7 | 3 | 2 | 1 | 100.0 (3/3) | 5 | 100.0 (5/5) | 100.0 (3/3) |" in section
    assert "| all runs | 12 | 58.3 | 8 | 3 | 1 | 87.5 (7/8) | 11 | 90.9 (10/11) | 100.0 (8/8) |" in section


def test_the_grade_page_lists_its_keys_and_the_judges_rule(graded_root):
    page = client(graded_root, "ivy").get("/grade").text
    assert "<kbd>1</kbd> right" in page and "<kbd>2</kbd> wrong" in page and "<kbd>0</kbd> cannot tell" in page
    assert "Numbers must be equal" in page and "Reply with one word" not in page  # the rubric, less its answer format
