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
from hvbench_assets.testkit.bench_factory import (
    ITEMS_PER_TASK,
    SPEC,
    item_of,
    right_letter,
)
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply

N_ITEMS = len(SPEC) * ITEMS_PER_TASK
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    from hvbench_assets.testkit.bench_factory import make_benchmark

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
    with FakeOpenAIServer(responder=answer_like(items), latency_s=0.4) as server:
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
    assert "| Qwen3-VL | 43.23 | 67.65 | 54.35 | 48.35 | 55.07 | 53.39 | - |" in out
    # 12 of 16 tasks: no number in the Overall column, the 12-task mean is marked as partial beside it
    assert "| GPT-4o | 33.55 | 51.48 | 62.05 | - | 49.02 | - | 49.02 (12/16) |" in out


# The paper's Table 4 as published (supplement, tab-separated): a category header row above the task row,
# Avg columns, underlined cells; three of its rows.
PAPER_TSV = (
    "Models\tEmotion Perception\t\t\t\t\tPerson Recognition\t\t\t\t\tBehavior Analysis\t\t\t\t\t"
    "Speech-Visual Alignment\t\t\t\t\n"
    "\tER\tETA\tAR\tEIC\tAvg\tT2H\tH2T\tHC\tATD\tAvg\tBTA\tBCA\tAST\tTSA\tAvg\tAVSM\tASD\tAVAD\tSCM\tAvg\n"
    "Qwen3-VL\t40.3\t37.6\t53.0\t42.0\t43.2\t<u>94.4</u>\t<u>77.6</u>\t<u>51.9</u>\t46.7\t67.6\t<u>60.5</u>\t"
    "<u>64.2</u>\t39.0\t53.7\t54.3\t<u>71.1</u>\t<u>65.8</u>\t34.3\t22.2\t48.3\n"
    "GPT-4o (20241120)\t36.5\t43.6\t25.6\t28.5\t33.6\t49.2\t77.0\t47.2\t32.5\t50.9\t62.1\t62.9\t52.0\t71.2\t"
    "62.1\t-\t-\t-\t-\t-\n"
    "Human\t87.6\t85.0\t87.8\t78.0\t84.6\t98.9\t84.1\t92.5\t78.3\t88.5\t86.7\t84.5\t88.6\t88.1\t87.0\t"
    "96.0\t96.1\t87.0\t98.3\t94.4\n"
)


@pytest.mark.parametrize("form", ["tsv", "markdown"])
def test_aggregate_reads_the_papers_two_header_layout(tmp_path, capsys, form):
    text = PAPER_TSV if form == "tsv" else "".join(
        "| " + " | ".join(line.split("\t")) + " |\n" + ("|---" * 21 + "|\n" if i == 1 else "")
        for i, line in enumerate(PAPER_TSV.splitlines()))
    path = tmp_path / ("table.tsv" if form == "tsv" else "table.md")
    path.write_text(text)
    assert main(["aggregate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| Qwen3-VL | 43.23 | 67.65 | 54.35 | 48.35 | 55.07 | 53.39 | - |" in out  # the paper prints 53.4
    assert "| GPT-4o (20241120) | 33.55 | 51.48 | 62.05 | - | 49.02 | - | 49.02 (12/16) |" in out
    assert "| Human |" in out


@pytest.mark.parametrize("text,needle", [
    ("model,ER,ETA\nA,40.3,oops\n", ":2: model 'A', column ETA: 'oops' is not a number"),
    ("model,ER,ETA\nA,40.3\n", ":2: model 'A' has 1 cells for 2 header columns"),
    ("model,ER,ETA\nA,40,41\nA,1,2\n", ":3: model 'A' appears twice"),
    ("model,ER,ETA,XYZ\nA,40,41,3\n", ":1: column 4 header 'XYZ' is neither"),
    ("model,ER,ETA\nA,40,410\n", ":2: model 'A', column ETA: 410 is outside 0-100"),
    ("just,some,words\n1,2,3\n", "no header row naming tasks"),
    ("model,ER,ER\nA,1,2\n", ":1: task 'ER' appears twice"),
])
def test_aggregate_malformed_input_is_one_line_naming_the_row(tmp_path, capsys, text, needle):
    path = tmp_path / "scores.csv"
    path.write_text(text)
    assert main(["aggregate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (f"{path}{needle}" if needle.startswith(":") else needle) in err  # file and line named


def _moved_videos_bench(tmp_path, bench, layout: str) -> Path:
    """A copy of the benchmark whose `Video` fields are bare file names and whose videos sit in `layout`."""
    import json
    import shutil

    root, _ = bench
    copy = tmp_path / "moved"
    copy.mkdir()
    for f in root.glob("*.jsonl"):
        rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        for r in rows:
            if layout != "nowhere":
                dest = copy / layout.replace("<task>", f.stem) / Path(r["Video"]).name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(root / r["Video"], dest)
            r["Video"] = Path(r["Video"]).name
        (copy / f.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return copy


def test_eval_finds_videos_in_a_videos_folder_or_stops_once_naming_the_option(bench, tmp_path, capsys):
    _, items = bench
    with FakeOpenAIServer(responder=answer_like(items)) as server:
        mf = models_file(tmp_path / "models.toml", server)
        args = ["--model", "good", "--frames", "2", "--warehouse", str(tmp_path / "wh.duckdb"), "--models-file", str(mf),
                "--no-progress"]
        root = _moved_videos_bench(tmp_path, bench, "videos")
        assert main(["eval", "--benchmark", str(root)] + args) == 0 and server.request_count == N_ITEMS
        lost = tmp_path / "lost"
        (root / "videos").rename(lost)
        capsys.readouterr()
        assert main(["eval", "--benchmark", str(root), "--name", "other"] + args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "none of the" in err and "--video-root" in err and "warning" not in err
        assert server.request_count == N_ITEMS  # stopped before asking anything
        assert main(["eval", "--benchmark", str(root), "--name", "other", "--video-root", str(lost)] + args) == 0
        assert f"recorded {N_ITEMS}, failed 0" in capsys.readouterr().out  # same frames: from the call cache


def test_unknown_model_is_reported_before_the_benchmark_is_read(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "bench"
    empty.mkdir()
    (empty / "Human_Count.jsonl").write_text('{"Question": "q", "choices": "Option A: {1}\\n\\nOption B: {2}", '
                                              '"Answer": "A", "Video": "gone.mp4", "Question_id": "1"}\n')
    mine = tmp_path / "mine.toml"
    mine.write_text('[models.a]\nmodel_id = "a"\nbase_url = "http://127.0.0.1:9/v1"\n')
    monkeypatch.setenv("HVBENCH_MODELS_FILE", str(mine))
    assert main(["eval", "--benchmark", str(empty), "--model", "my_vlm", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: unknown model 'my_vlm'")
    assert str(mine) in err and "HVBENCH_MODELS_FILE" in err and "HVBENCH_MLLM_MY_VLM_BASE_URL" in err
    assert "side by side" in err and "gone.mp4" not in err


def test_a_rejected_key_stops_eval_at_once_and_a_leaky_body_leaves_no_key_behind(bench, tmp_path, capsys, monkeypatch):
    root, items = bench
    secret = "eval-key-0123456789abcdef"
    monkeypatch.setenv("HVB_EVAL_KEY", secret)
    with FakeOpenAIServer(responder=answer_like(items), api_key="another-key-entirely") as server:
        mf = tmp_path / "models.toml"
        mf.write_text(f'[models.good]\nmodel_id = "good"\nbase_url = "{server.base_url}"\napi_key_env = "HVB_EVAL_KEY"\n')
        wh = tmp_path / "wh.duckdb"
        args = ["eval", "--benchmark", str(root), "--model", "good", "--frames", "2", "--warehouse", str(wh),
                "--models-file", str(mf), "--no-progress", "--concurrency", "2"]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "HTTP 401" in err and "HVB_EVAL_KEY" in err and secret not in err
        assert server.request_count <= 2  # the requests in flight when the first 401 came back, no retries
        assert Warehouse(wh).count(EVAL_RESPONSES) == 0
        server.api_key = secret
        good = answer_like(items)
        server.responder = lambda req: FakeReply.leaky(200) if "[Human_Count#0]" in req.prompt else good(req)
        monkeypatch.setenv("HVBENCH_MLLM_MAX_ATTEMPTS", "2")
        assert main(args) == 1  # one item got garbage on every attempt: a failed row, the rest answered
        out = capsys.readouterr()
        stored = str(Warehouse(wh).query("SELECT * FROM eval_responses")) + str(Warehouse(wh).query("SELECT * FROM model_calls"))
        assert secret not in stored and secret not in out.out + out.err and "Bearer ***" in stored
        assert Warehouse(wh).count(EVAL_RESPONSES, status="failed") == 1


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """`hvbench … | head` closes the pipe early: the command ends with 0 and no traceback."""
    wh = tmp_path / "wh.duckdb"
    code = f"import sys; from hvbench_assets.cli import main; sys.exit(main(['questions', '--warehouse', {str(wh)!r}]))"
    Warehouse(wh)  # an empty warehouse: `questions` still prints its summary line
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    proc = subprocess.run([sys.executable, "-c", code], stdout=write, stderr=subprocess.PIPE, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    os.close(write)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
