"""Annotations are checked before they are stored, in the review app (over HTTP) and in `hvbench annotate` (the
CLI), by the same core functions; annotated answers then go through review unless two annotators agree.
Real questions: duo (TSA waits for an action) and five_people_grid (HC waits for a count)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from hvbench_assets.cli import main
from hvbench_assets.core.curation.state import DEFAULT_EXCLUDED, curate
from hvbench_assets.core.curation.store import load_state
from hvbench_assets.core.tasks import annotations
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.conftest import SHARED_VIDEOS

HC_ASSET = [a for a in TASK_ASSETS if a.key.to_user_string() == "human_counting"]


@pytest.fixture(scope="module")
def app(two_clips, two_clips_built):
    cfg = ReviewConfig(warehouse=two_clips / "wh.duckdb", data_dir=two_clips / "data",
                       roots=(SHARED_VIDEOS, two_clips_built / "data"))
    wh = Warehouse(two_clips / "wh.duckdb")
    application = create_app(cfg)

    def as_(name: str) -> TestClient:
        c = TestClient(application, base_url="http://127.0.0.1")
        assert c.post("/login", json={"name": name}).status_code == 200
        return c

    return wh, as_, {q["abbrev"]: q for q in wh.rows(QUESTIONS)}


def raw(c: TestClient, body: str):
    """A JSON body as text: Python's JSON reader takes NaN and Infinity, so they must be refused explicitly."""
    return c.post("/api/annotations", content=body, headers={"content-type": "application/json"})


def refused(r, field: str, why: str, confirm: bool = False):
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["field"] == field and why in body["error"], body
    assert body["needs_confirmation"] is confirm


def test_bad_counts_get_a_clear_400_and_nothing_is_stored(app):
    wh, as_, qs = app
    c, hc = as_("ann"), qs["HC"]
    facts = annotations.clip_facts(wh, hc["video_id"])
    assert facts.l2_people and facts.l2_people >= 3  # five_people_grid: L2's estimate is the reference
    qid = hc["question_id"]
    refused(c.post("/api/annotations", json={"question_id": qid, "count": 1_000_000_000}), "count", "outside 1..200")
    refused(c.post("/api/annotations", json={"question_id": qid, "count": 0}), "count", "outside 1..200")
    refused(c.post("/api/annotations", json={"question_id": qid, "count": 2.5}), "count", "whole number")
    refused(c.post("/api/annotations", json={"question_id": qid, "count": "abc"}), "count", "expected a number")
    refused(c.post("/api/annotations", json={"question_id": qid, "count": True}), "count", "expected a number")
    refused(c.post("/api/annotations", json={"question_id": qid}), "count", "expected a number")
    refused(raw(c, f'{{"question_id": "{qid}", "count": NaN}}'), "count", "finite")
    refused(raw(c, f'{{"question_id": "{qid}", "count": Infinity}}'), "count", "finite")
    far = facts.l2_people * 3
    refused(c.post("/api/annotations", json={"question_id": qid, "count": far}), "count",
            f"L2's estimate of {facts.l2_people}", confirm=True)
    refused(c.post("/api/annotations", json={"question_id": qid, "count": far, "confirm": "yes"}), "count",
            "L2's estimate", confirm=True)  # only an explicit true confirms
    assert wh.count(ANNOTATIONS) == 0
    ok = c.post("/api/annotations", json={"question_id": qid, "count": far, "confirm": True})
    assert ok.status_code == 200 and ok.json()["value"] == {"count": far}
    ok = c.post("/api/annotations", json={"question_id": qid, "count": str(facts.l2_people)})
    assert ok.status_code == 200 and ok.json()["value"] == {"count": facts.l2_people}
    wh.execute(f'DELETE FROM "{ANNOTATIONS.name}"')


def test_action_times_inside_the_clip_and_text_in_the_distractors_form(app):
    wh, as_, qs = app
    c, tsa = as_("ann"), qs["TSA"]
    qid = tsa["question_id"]
    duration = annotations.clip_facts(wh, tsa["video_id"]).duration_s
    good = {"question_id": qid, "action": "begins to wave"}
    refused(c.post("/api/annotations", json={**good, "start_s": 99_999}), "start_s", f"end of the {duration:.1f} s clip")
    refused(c.post("/api/annotations", json={**good, "start_s": -1}), "start_s", "before the clip starts")
    refused(c.post("/api/annotations", json={**good, "start_s": "abc"}), "start_s", "expected a number")
    refused(raw(c, f'{{"question_id": "{qid}", "action": "begins to wave", "start_s": NaN}}'), "start_s", "finite")
    refused(c.post("/api/annotations", json={**good, "start_s": 2, "end_s": 1}), "end_s", "not after its start")
    refused(c.post("/api/annotations", json={**good, "start_s": 2, "end_s": duration + 5}), "end_s", "after the end")
    refused(c.post("/api/annotations", json={**good, "action": "waves", "start_s": 2}), "action", "begins to")
    long = "begins to " + " ".join(["wave"] * 12)
    refused(c.post("/api/annotations", json={**good, "action": long, "start_s": 2}), "action", "3-10 words")
    refused(c.post("/api/annotations", json={**good, "action": "begins to\nwave", "start_s": 2}), "action", "one line")
    assert wh.count(ANNOTATIONS) == 0
    ok = c.post("/api/annotations", json={**good, "action": "Begins to wave.", "start_s": 2.4, "end_s": 3.5})
    assert ok.status_code == 200 and ok.json()["value"] == {"action": "begins to wave", "start_s": 2, "end_s": 3.5}
    wh.execute(f'DELETE FROM "{ANNOTATIONS.name}"')


def test_cli_refuses_the_same_values_with_a_clear_error(app, capsys):
    wh, _, qs = app
    hc, tsa = qs["HC"], qs["TSA"]
    base = ["annotate", "--warehouse", str(wh.path), "--annotator", "cli"]
    cases = [
        (["count", hc["video_id"], "1000000000"], "count: 1000000000 is outside 1..200"),
        (["count", hc["video_id"], "nan"], "count: expected a finite number"),
        (["count", hc["video_id"], "abc"], "count: expected a number"),
        (["count", hc["video_id"], "50"], "rerun with --confirm"),
        (["action", tsa["video_id"], "--track", "0", "--action", "begins to wave", "--start", "99999"],
         "start_s: 99999 s is after the end"),
        (["action", tsa["video_id"], "--track", "0", "--action", "begins to wave", "--start", "inf"],
         "start_s: expected a finite number"),
        (["action", tsa["video_id"], "--track", "0", "--action", "waves", "--start", "2"], "action: write it like"),
    ]
    for argv, message in cases:
        assert main(base + argv) == 2, argv
        err = capsys.readouterr().err
        assert "nothing stored" in err and message in err, (argv, err)
    assert wh.count(ANNOTATIONS) == 0
    assert main(base + ["count", hc["video_id"], "50", "--confirm"]) == 0
    assert [a["value"] for a in wh.rows(ANNOTATIONS)] == [{"count": 50}]
    wh.execute(f'DELETE FROM "{ANNOTATIONS.name}"')


def test_annotated_answers_are_reviewed_unless_two_annotators_agree(app, two_clips):
    wh, as_, qs = app
    assert not {"HC", "AST", "TSA"} & set(DEFAULT_EXCLUDED)
    hc = qs["HC"]
    n = annotations.clip_facts(wh, hc["video_id"]).l2_people
    assert as_("ann").post("/api/annotations", json={"question_id": hc["question_id"], "count": n}).status_code == 200

    def hc_state():
        materialize(two_clips, hc["video_id"], HC_ASSET)  # what annotation_sensor runs
        s = load_state(wh)
        row = next(r for r in curate(s["questions"], s["decisions"], assignments=s["assignments"],
                                     annotations=s["annotations"]) if r["abbrev"] == "HC")
        queue = as_("rev").get("/api/next/review").json()["item"]
        return row, queue

    row, queue = hc_state()
    assert row["state"] == "unreviewed" and queue is not None  # one annotator: the HC question waits for review
    assert any(q["abbrev"] == "HC" for q in _queue(as_("rev")))
    as_("bob").post("/api/annotations", json={"question_id": hc["question_id"], "count": n + 1})
    row, _ = hc_state()
    assert row["state"] == "unreviewed"  # two annotators who disagree: still reviewed
    as_("cai").post("/api/annotations", json={"question_id": hc["question_id"], "count": n + 1})
    row, _ = hc_state()
    assert row["state"] == "not_reviewed" and row["reason"] == "annotators agree: bob, cai"
    assert not any(q["abbrev"] == "HC" for q in _queue(as_("rev")))
    wh.execute(f'DELETE FROM "{ANNOTATIONS.name}"')


def _queue(c: TestClient) -> list[dict]:
    """Every item of a reviewer's review queue (skipping through it)."""
    out, skip = [], []
    while (item := c.get("/api/next/review?skip=" + ",".join(skip)).json()["item"]) is not None:
        out.append(item)
        skip.append(item["question_id"])
    return out
