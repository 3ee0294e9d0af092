"""Export folder rules (left-out items, never replacing a foreign folder, stale temporaries) and blind answering
through the real client against the loopback server (a failed call is asked again, nothing else)."""

from __future__ import annotations

import json
import os

import pytest

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.export import ExportError, export_benchmark, is_our_export
from hvbench_assets.core.benchmark.leakage import answer_blind, blind_jobs
from hvbench_assets.core.mllm import MllmClient, RetryPolicy, parse_registry
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply
from hvbench_assets.testkit.media_factory import moving_square_video


def item(qid, task, video, answer="B"):
    return {"question_id": qid, "task": task, "question": f"Question {qid}?", "answer": answer, "video_path": str(video),
            "options": [{"letter": "A", "text": "one"}, {"letter": "B", "text": "two"}, {"letter": "C", "text": "three"}],
            "review_state": "accepted", "leakage": "kept"}


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return moving_square_video(tmp_path_factory.mktemp("v") / "clip.mp4", seconds=1.0)


def test_export_round_trips_and_names_left_out_items(tmp_path, video):
    folder = tmp_path / "benchmarks" / "mine"
    res = export_benchmark([item("q1", "Human_Count", video), item("q2", "Human_Count", tmp_path / "gone.mp4"),
                            item("q3", "ASD", video, answer="C")], folder, {"benchmark": "mine"})
    assert res.counts["Human_Count"] == 1 and res.counts["Active_Speaker_Detection"] == 1
    assert res.left_out == [{"question_id": "q2", "task": "Human_Count",
                             "reason": f"question video missing: {tmp_path / 'gone.mp4'}"}]
    assert len(list(folder.glob("*.jsonl"))) == len(TASKS) and is_our_export(folder)
    bench = load_benchmark(folder)
    assert not bench.issues and bench.video_problem is None
    got = {i.question_id: (i.task, i.answer, i.option_text(i.answer), i.video_path.is_file()) for i in bench.items}
    assert got == {"q1": ("Human_Count", "B", "two", True), "q3": ("Active_Speaker_Detection", "C", "three", True)}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["benchmark"] == "mine" and manifest["left_out"][0]["question_id"] == "q2"


def test_a_foreign_folder_is_never_replaced_and_stale_temporaries_go(tmp_path, video):
    published = tmp_path / "HumanVBench"
    published.mkdir()
    (published / "Human_Count.jsonl").write_text("{}\n")
    with pytest.raises(ExportError, match="was not written by hvbench"):
        export_benchmark([item("q1", "HC", video)], published, {})
    assert (published / "Human_Count.jsonl").read_text() == "{}\n"
    stale = tmp_path / ".mine.export-999999999-1"  # a killed export's leftover (no such process)
    stale.mkdir()
    export_benchmark([item("q1", "HC", video)], tmp_path / "mine", {})
    assert not stale.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".mine.")]


def test_failed_blind_call_is_stored_as_failed_and_only_it_is_asked_again(tmp_path):
    q = {"question_id": "q1", "task": "Human_Count", "question": "How many people?", "answer": "B",
         "options": [{"letter": "A", "text": "3"}, {"letter": "B", "text": "4"}, {"letter": "C", "text": "5"}]}
    jobs = blind_jobs([q], ["blind"])
    with FakeOpenAIServer() as server:
        server.script(FakeReply.server_error(503))
        server.responder = lambda req: FakeReply(text="B")
        reg = parse_registry({"models": {"blind": {"model_id": "b", "base_url": server.base_url,
                                                   "max_concurrency": 1}}}, environ={})
        wh = Warehouse(tmp_path / "wh.duckdb")
        rows = answer_blind(MllmClient(reg, wh, retry=RetryPolicy(max_attempts=1)), jobs)
        failed = [r for r in rows if r["status"] == "failed"]  # the first request to arrive got the 503
        assert len(failed) == 1 and failed[0]["transient"] and sum(r["status"] == "parsed" for r in rows) == 2
        assert not any(r.images for r in server.requests)  # blind: no frame is sent
        again = answer_blind(MllmClient(reg, wh, retry=RetryPolicy(max_attempts=1)), jobs)
        assert len(server.requests) == 4 and all(r["status"] == "parsed" for r in again)
        assert [r["correct"] for r in again] == [True, False, False]  # "B" holds "4" only in the published order


def test_replacing_an_export_swaps_it_whole_and_a_half_swap_is_recovered(tmp_path, video):
    from hvbench_assets.core.benchmark.export import _exchange, recover

    folder = tmp_path / "mine"
    export_benchmark([item("q1", "HC", video)], folder, {"round": 1})
    export_benchmark([item("q2", "HC", video)], folder, {"round": 2})
    assert json.loads((folder / "manifest.json").read_text())["round"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]  # nothing left aside
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir(), (a / "x").write_text("a"), (b / "x").write_text("b")
    if _exchange(a, b):  # where the file system has RENAME_EXCHANGE
        assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"
    os.rename(folder, tmp_path / ".mine.old-1-1")  # killed between the fallback's two renames
    recover(tmp_path, "mine")
    assert json.loads((folder / "manifest.json").read_text())["round"] == 2
