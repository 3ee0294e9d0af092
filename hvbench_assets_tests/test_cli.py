"""`hvbench eval` / `hvbench report` end to end: real client, real HTTP server, a real process killed
midway and resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hvbench_assets.cli import build_parser, main
from hvbench_assets.core.evaluation import EVAL_RESPONSES
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.core.evaluation.bench_factory import (
    ITEMS_PER_TASK,
    SPEC,
    item_of,
    right_letter,
)
from hvbench_assets_tests.fake_openai_server import FakeOpenAIServer

N_ITEMS = len(SPEC) * ITEMS_PER_TASK
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    from hvbench_assets_tests.core.evaluation.bench_factory import make_benchmark

    root = tmp_path_factory.mktemp("cli") / "clibench"
    return root, make_benchmark(root)


def models_file(path: Path, server: FakeOpenAIServer) -> Path:
    path.write_text("\n".join(f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{server.base_url}"\nmax_frames = 16\n'
                               for n in ("good", "sloppy")))
    return path


def answer_like(items):
    def respond(req):
        p = req.prompt
        right = right_letter(p, items)
        if req.model == "good":
            return f"Answer: {right}"
        idx = int(item_of(p, items).qid.rsplit("_", 1)[1])
        return "A" if idx else "Hmm, hard to say."
    return respond


def test_parser_has_subcommands():
    parser = build_parser()
    args = parser.parse_args(["eval", "--benchmark", "x", "--model", "m", "--fps", "1"])
    assert (args.command, args.fps, args.frames, args.concurrency) == ("eval", 1.0, None, 4)
    with pytest.raises(SystemExit):
        parser.parse_args(["eval", "--benchmark", "x", "--model", "m", "--fps", "1", "--frames", "4"])


def test_eval_then_report(bench, tmp_path, capsys, monkeypatch):
    root, items = bench
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "data"))
    wh = tmp_path / "wh.duckdb"
    with FakeOpenAIServer(responder=answer_like(items)) as server:
        mf = models_file(tmp_path / "models.toml", server)
        code = main(["eval", "--benchmark", str(root), "--model", "good", "--model", "sloppy", "--frames", "4",
                     "--warehouse", str(wh), "--models-file", str(mf), "--no-progress", "--concurrency", "2"])
        assert code == 0 and server.request_count == 2 * N_ITEMS
        out = capsys.readouterr().out
        assert f"asked {N_ITEMS}, already answered 0, recorded {N_ITEMS}, failed 0 (complete)" in out
        assert main(["eval", "--benchmark", str(root), "--model", "active", "--frames", "4", "--warehouse", str(wh),
                     "--models-file", str(mf), "--no-progress"]) == 0
        assert server.request_count == 2 * N_ITEMS  # both active models resumed: nothing asked again
    human = tmp_path / "human.json"
    human.write_text('{"ER": 87.6, "HC": 92.5}')
    capsys.readouterr()
    assert main(["report", "--benchmark", str(root), "--warehouse", str(wh), "--human", str(human)]) == 0
    md = capsys.readouterr().out
    assert "| good | 100.0 |" in md and "| Human | 87.6 |" in md
    # sloppy: item 0 of every task unparsed, items 1-2 answer "A"; count its right answers by hand
    sloppy_right = sum(1 for it in items if not it.qid.endswith("_0") and it.answer == "A")
    rows = Warehouse(wh).rows(EVAL_RESPONSES)
    assert sum(r["correct"] for r in rows if r["model"] == "sloppy") == sloppy_right
    assert sum(r["status"] == "unparsed" for r in rows if r["model"] == "sloppy") == len(SPEC)
    report_dir = tmp_path / "data" / "reports" / "clibench"
    assert (report_dir / "report.md").read_text() in md and "<svg" in (report_dir / "report.html").read_text()


def test_report_for_unknown_benchmark_fails_cleanly(tmp_path, capsys):
    assert main(["report", "--benchmark", "nothing", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert "no evaluation runs" in capsys.readouterr().err


def test_killed_process_resumes_without_repeating(bench, tmp_path):
    root, items = bench
    wh = tmp_path / "wh.duckdb"
    with FakeOpenAIServer(responder=answer_like(items), latency_s=0.15) as server:
        mf = models_file(tmp_path / "models.toml", server)
        cmd = [sys.executable, "-m", "hvbench_assets.cli", "eval", "--benchmark", str(root), "--model", "good",
               "--frames", "2", "--warehouse", str(wh), "--models-file", str(mf), "--concurrency", "2"]
        env = {**os.environ, "HVBENCH_DATA_DIR": str(tmp_path / "data")}
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        warehouse = Warehouse(wh)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and warehouse.count(EVAL_RESPONSES) < 6:
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        stderr = proc.stderr.read().decode()
        assert "q/s" in stderr or "%|" in stderr  # the tqdm progress bar was drawn
        stored = {(r["task"], r["question_id"]) for r in warehouse.rows(EVAL_RESPONSES)}
        assert 6 <= len(stored) < N_ITEMS
        asked_before = len(server.requests)
        server.reset()
        assert main(cmd[3:] + ["--no-progress"]) == 0
        again = {(item_of(r.prompt, items).task, item_of(r.prompt, items).qid) for r in server.requests}
        assert not again & stored  # no stored answer was asked again
        assert len(again) == len(server.requests)  # and nothing twice
        # a reply that reached the call cache but not eval_responses before the kill is served from the cache
        cached = {(r["task"], r["question_id"]) for r in warehouse.rows(EVAL_RESPONSES) if r["cached"]}
        assert again | cached | stored == {(i.task, i.qid) for i in items} and not again & cached
        assert asked_before >= len(stored)
    assert warehouse.count(EVAL_RESPONSES) == N_ITEMS


def test_terminated_process_stores_every_reply_it_received(bench, tmp_path):
    root, items = bench
    wh = tmp_path / "wh.duckdb"
    with FakeOpenAIServer(responder=answer_like(items), latency_s=0.2) as server:
        mf = models_file(tmp_path / "models.toml", server)
        cmd = [sys.executable, "-m", "hvbench_assets.cli", "eval", "--benchmark", str(root), "--model", "good",
               "--frames", "2", "--warehouse", str(wh), "--models-file", str(mf), "--concurrency", "3", "--no-progress"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "HVBENCH_DATA_DIR": str(tmp_path / "data")},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.request_count < 5:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
        assert "run the same command again to resume" in proc.stderr.read().decode()
        time.sleep(0.3)  # let the server finish writing replies nobody waits for
        asked = {item_of(r.prompt, items).qid for r in server.requests}
        stored = {r["question_id"] for r in Warehouse(wh).rows(EVAL_RESPONSES)}
        assert stored == asked and 5 <= len(stored) < N_ITEMS  # every request sent got its reply stored


def test_aggregate_paper_numbers(tmp_path, capsys):
    # two rows of the paper's Table 4 (per-task cells only), in a CSV with acronyms as the header
    csv_text = ("model,ER,ETA,AR,EIC,T2H,H2T,HC,ATD,BTA,BCA,AST,TSA,AVSM,ASD,AVAD,SCM\n"
                "Qwen3-VL,40.3,37.6,53.0,42.0,94.4,77.6,51.9,46.7,60.5,64.2,39.0,53.7,71.1,65.8,34.3,22.2\n"
                "GPT-4o,36.5,43.6,25.6,28.5,49.2,77.0,47.2,32.5,62.1,62.9,52.0,71.2,-,-,-,-\n")
    (tmp_path / "t.csv").write_text(csv_text)
    assert main(["aggregate", str(tmp_path / "t.csv")]) == 0
    out = capsys.readouterr().out
    # paper: Qwen3-VL 43.2 / 67.6 / 54.3 / 48.3, 16-task 53.4; GPT-4o 33.6 / (51.5) / 62.1, speech refused
    assert "| Qwen3-VL | 43.23 | 67.65 | 54.35 | 48.35 | 55.07 | 53.39 | 16 |" in out
    assert "| GPT-4o | 33.55 | 51.48 | 62.05 | - | 49.02 | 49.02 | 12 |" in out
