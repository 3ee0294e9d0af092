"""Review writes through the served app while a Dagster run rewrites the same warehouse: nothing fails,
no row is lost (both sides take the Warehouse file lock)."""

from __future__ import annotations

import datetime as dt
import threading

import httpx

from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.review.harness import review_server


def test_review_writes_during_a_dagster_run(two_clips, two_clips_built):
    wh = Warehouse(two_clips / "wh.duckdb")
    asd = wh.rows(QUESTIONS, abbrev="ASD")[0]
    hc = wh.rows(QUESTIONS, abbrev="HC")[0]
    outcome: dict = {}

    def dagster_run():
        outcome["start"] = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        try:
            outcome["result"], _ = materialize(two_clips, "duo", TASK_ASSETS)  # rewrites questions 16 times
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc
        outcome["end"] = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    sent_decisions = sent_annotations = 0
    with review_server(two_clips, media_roots=(two_clips_built / "data",)) as url:
        client = httpx.Client(base_url=url, timeout=120)
        client.post("/login", json={"name": "ann"})
        run = threading.Thread(target=dagster_run)
        run.start()
        while run.is_alive() or sent_decisions < 20:
            r = client.post("/api/decisions", json={"question_id": asd["question_id"], "action": "accept",
                                                    "content_hash": question_content_hash(asd), "blind_choice": asd["answer"],
                                                    "request_id": f"r{sent_decisions}"})  # each a new decision
            assert r.status_code == 200, r.text
            sent_decisions += 1
            if sent_decisions % 4 == 0:
                r = client.post("/api/annotations", json={"question_id": hc["question_id"], "count": 5})
                assert r.status_code == 200, r.text
                sent_annotations += 1
        run.join()
    assert "error" not in outcome and outcome["result"].success
    rows = decisions(wh)
    assert len(rows) == sent_decisions and len({r["decision_id"] for r in rows}) == sent_decisions
    assert wh.count(ANNOTATIONS) == sent_annotations
    during = [r for r in rows if outcome["start"] <= r["created_at"] <= outcome["end"]]
    assert during, "no review write overlapped the run"
