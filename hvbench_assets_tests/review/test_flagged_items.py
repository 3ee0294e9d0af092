"""Flagged items go back to review, end to end on a warehouse built by the real assets (real_labels.DUO: ASD, AVAD):
the benchmark is exported, three models answer it through the loopback OpenAI-compatible server (full and text
arms) with `hvbench eval`, `hvbench report` flags the AVAD item every model gets wrong while the text arm is at
chance, the review app serves it first with the reason and, after the pick, the models' answers; the reviewer's
rejection takes it out of the next export, and `hvbench explain` shows the flag and what review made of it."""

from __future__ import annotations

import csv
import re

import pytest
from starlette.testclient import TestClient

from hvbench_assets.cli import main
from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.tables import QUESTION_POOL
from hvbench_assets.core.curation.flags import WRONG_BY_ALL
from hvbench_assets.core.curation.store import record_decision
from hvbench_assets.core.curation.tables import REVIEW_FLAGS
from hvbench_assets.core.tasks.store import QUESTIONS, question_content_hash
from hvbench_assets.defs.resources import BenchmarkResource, MllmResource, SettingsResource, WarehouseResource
from hvbench_assets.review.app import ReviewConfig, create_app
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.conftest import SHARED_VIDEOS
from hvbench_assets_tests.defs.test_benchmark_assets import TASKS_USED, run_bench
from hvbench_assets_tests.real_labels import DUO, labelled

MODELS = ("m1", "m2", "m3")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    root = labelled(tmp_path_factory, DUO, "duo")
    _, wh = materialize(root, "duo", TASKS_USED)
    asd = wh.rows(QUESTIONS, video_id="duo", abbrev="ASD")[0]
    avad = wh.rows(QUESTIONS, video_id="duo", abbrev="AVAD")[0]
    record_decision(wh, asd, "ann", "accept", blind_choice=asd["answer"])  # AVAD: not reviewed by configuration
    server = FakeOpenAIServer().start()
    models = root / "models.toml"
    models.write_text("".join(f'[models.{m}]\nmodel_id = "{m}"\nbase_url = "{server.base_url}"\n' for m in MODELS))
    resources = {"settings": SettingsResource(data_dir=str(root / "data")),
                 "warehouse": WarehouseResource(path=str(root / "wh.duckdb")),
                 "mllm": MllmResource(models_file=str(models), max_attempts=1, backoff_s=0.01),
                 "benchmark": BenchmarkResource()}
    assert run_bench(resources, "ours").success
    folder = root / "data" / "benchmarks" / "ours"
    items = {i.question: i for i in load_benchmark(folder).items}
    assert {i.question_id for i in items.values()} == {asd["question_id"], avad["question_id"]}

    def answer(req) -> FakeReply:  # right on ASD; on AVAD every model and the text arm pick a wrong option
        item = items[re.search(r"Question: (.*)", req.prompt).group(1)]
        if item.question_id == asd["question_id"]:
            return FakeReply(text=item.answer)
        wrong = [x for x in item.letters if x != item.answer]
        return FakeReply(text=wrong[MODELS.index(req.model) % len(wrong)])

    server.responder = answer
    try:
        assert main(["eval", "--benchmark", str(folder), *sum((["--model", m] for m in MODELS), []), "--arms",
                     "full,text", "--frames", "2", "--warehouse", str(root / "wh.duckdb"), "--models-file", str(models),
                     "--no-progress"]) == 0
    finally:
        server.stop()
    yield {"root": root, "wh": wh, "asd": asd, "avad": avad, "resources": resources, "folder": folder}


def report(root, capsys) -> str:
    assert main(["report", "--benchmark", "ours", "--warehouse", str(root / "wh.duckdb"), "--out",
                 str(root / "report"), "--quiet", "--bootstrap", "50"]) == 0
    return capsys.readouterr().err


def test_flagged_item_is_reviewed_leaves_the_export_and_explain_shows_it(evaluated, capsys):
    root, wh, avad = evaluated["root"], evaluated["wh"], evaluated["avad"]
    assert "review queue: 1 flagged item(s) (1 new)" in report(root, capsys)
    flagged = {r["question_id"]: r for r in csv.DictReader((root / "report" / "flagged_items.csv").open())}
    assert flagged[avad["question_id"]]["reason"] == f"nobody right; {WRONG_BY_ALL}"
    assert flagged[evaluated["asd"]["question_id"]]["reason"] == "non-functional distractors"  # stays in the CSV
    md = (root / "report" / "report.md").read_text()
    assert "## Back to review" in md and f"1 flagged item(s) are in the review queue (1 new): {avad['question_id']}" in md
    (flag,) = wh.rows(REVIEW_FLAGS)
    assert flag["content_hash"] == question_content_hash(avad) and flag["reasons"] == [WRONG_BY_ALL]
    # by hand: each model's only other answer (ASD) is right, (1 + 1) / 3 = 0.667 with nothing else on AVAD, so all
    # three miss a sound item with 0.333^3 = 3.7 % < 5 %
    assert flag["detail"] == ("all 3 models chose a wrong option (missing it by luck: 3.7 %, from their other answers); "
                              "text arm 0/3 right (chance 33 %)")

    app = create_app(ReviewConfig(warehouse=root / "wh.duckdb", data_dir=root / "data",
                                  roots=(SHARED_VIDEOS, root / "data")))
    bob = TestClient(app, base_url="http://127.0.0.1")
    assert bob.post("/login", json={"name": "bob"}).status_code == 200
    assert 'id="flagged-count">1<' in bob.get("/").text
    item = bob.get("/api/next/review").json()["item"]
    assert item["question_id"] == avad["question_id"] and item["abbrev"] == "AVAD"  # not reviewed by configuration
    assert item["flag"]["reasons"] == [WRONG_BY_ALL] and "answers" not in item["flag"]  # the pick stays blind
    base = {"question_id": avad["question_id"], "content_hash": item["content_hash"]}
    pick = bob.post("/api/decisions", json={**base, "action": "pick", "blind_choice": avad["answer"]}).json()
    assert pick["stored"] is False and pick["answer"] == avad["answer"]  # the proposed answer, yet not accepted
    texts = {o["text"] for o in avad["options"] if o["letter"] != avad["answer"]}
    answers = pick["flag"]["answers"]
    assert [a["model"] for a in answers] == list(MODELS) and all(a["text"] in texts and not a["right"] for a in answers)
    done = bob.post("/api/decisions", json={**base, "action": "reject", "reason": "wrong_label",
                                            "blind_choice": avad["answer"]}).json()
    assert done["stored"] and done["next"] is None  # ASD was accepted before: nothing else for bob

    assert run_bench(evaluated["resources"], "ours").success  # reviewed_questions, then the benchmark again
    exported = {i.question_id for i in load_benchmark(evaluated["folder"]).items}
    assert exported == {evaluated["asd"]["question_id"]}
    pool = {r["question_id"]: r for r in wh.rows(QUESTION_POOL, benchmark="ours")}
    assert pool[avad["question_id"]]["reason"] == "review state rejected"

    assert main(["explain", avad["question_id"], "--warehouse", str(root / "wh.duckdb")]) == 0
    out = capsys.readouterr().out
    assert f"flagged by the evaluation of ours at {str(flag['flagged_at'])[:19]}: {WRONG_BY_ALL}" in out
    assert re.search(r"models chose: m1 '.+' \(wrong\); m2 '.+' \(wrong\); m3 '.+' \(wrong\)", out)
    assert "review after the flag: bob reject (wrong_label)" in out

    report(root, capsys)  # built again on the same replies: the flag keeps its time and stays closed
    assert [f["flagged_at"] for f in wh.rows(REVIEW_FLAGS)] == [flag["flagged_at"]]
    assert TestClient(app, base_url="http://127.0.0.1", cookies=bob.cookies).get("/api/next/review").json()["item"] is None
