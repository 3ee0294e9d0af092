"""lmms-eval interop: the exported task folder asks the same prompt and scores the same replies as `hvbench eval`;
lmms-eval sample logs import into `hvbench report`. The run through lmms-eval itself needs lmms-eval installed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hvbench_assets.cli import main
from hvbench_assets.core.evaluation import EVAL_RESPONSES
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.bench_factory import ITEMS_PER_TASK, SPEC, item_of, make_benchmark, right_letter
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer

N_ITEMS = len(SPEC) * ITEMS_PER_TASK


def answer_like(items):
    """good: right, in several styles; sloppy: item 0 unparsable, items 1-2 answer "A"."""
    def respond(req):
        item = item_of(req.prompt, items)
        idx = int(item.qid.rsplit("_", 1)[1])
        if req.model == "good":
            return [f"Answer: {right_letter(req.prompt, items)}", f"**{right_letter(req.prompt, items)}**",
                    f"The answer is ({right_letter(req.prompt, items)})."][idx]
        return "A" if idx else "Hmm, hard to say."
    return respond


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lmms")
    root = tmp / "lmmsbench"
    items = make_benchmark(root)
    wh = tmp / "wh.duckdb"
    server = FakeOpenAIServer(responder=answer_like(items)).start()
    mf = tmp / "models.toml"
    mf.write_text("\n".join(f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{server.base_url}"\n' for n in ("good", "sloppy")))
    assert main(["eval", "--benchmark", str(root), "--model", "good", "--model", "sloppy", "--frames", "4",
                 "--warehouse", str(wh), "--models-file", str(mf), "--no-progress"]) == 0
    assert main(["lmms-export", "--benchmark", str(root), "--out", str(tmp / "tasks")]) == 0
    yield {"tmp": tmp, "root": root, "items": items, "wh": Warehouse(wh), "server": server,
           "folder": tmp / "tasks" / "hvbench_lmmsbench"}
    server.stop()


def _utils(folder: Path):
    spec = importlib.util.spec_from_file_location("lmms_task_utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _docs(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((folder / "data").glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_exported_task_asks_the_same_prompt_and_scores_like_hvbench_eval(evaluated):
    folder, wh = evaluated["folder"], evaluated["wh"]
    group = (folder / "hvbench_lmmsbench.yaml").read_text()
    assert group.startswith("group: hvbench_lmmsbench") and "  - hvbench_lmmsbench_er\n" in group
    task_yaml = (folder / "hvbench_lmmsbench_asd.yaml").read_text()
    assert "process_results: !function utils.process_results" in task_yaml and "dataset_path: json" in task_yaml
    utils = _utils(folder)
    docs = _docs(folder)
    assert len(docs) == N_ITEMS and all(Path(d["video"]).is_file() for d in docs)
    sent = {r.prompt for r in evaluated["server"].requests}
    assert all(utils.doc_to_text(d) in sent for d in docs)  # the very prompt hvbench eval sent
    assert utils.doc_to_visual(docs[0]) == [docs[0]["video"]]
    stored = {(r["model"], r["question_id"]): r for r in wh.rows(EVAL_RESPONSES)}
    for model in ("good", "sloppy"):
        for d in docs:
            row = stored[(model, d["question_id"])]
            scored = utils.process_results(d, [row["response"]])
            assert scored["hvbench_accuracy"] == float(row["correct"]), (model, d["question_id"])
            assert scored["hvbench_unparsed"] == float(row["status"] != "parsed")


def _lmms_sample_log(folder: Path, replies: dict[str, str], out: Path) -> list[Path]:
    """Sample logs as lmms-eval 0.7.3 writes them with --log_samples (one file per task, one line per doc: the
    prompt as `input`, the reply as `filtered_resps`, the metrics; no doc when the doc holds media)."""
    utils = _utils(folder)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for data in sorted((folder / "data").glob("*.jsonl")):
        docs = [json.loads(line) for line in data.read_text().splitlines()]
        path = out / f"20261126_000000_samples_hvbench_lmmsbench_{data.stem.lower()}.jsonl"
        lines = []
        for i, d in enumerate(docs):
            reply = replies[d["question_id"]]
            lines.append(json.dumps({"doc_id": i, "target": d["answer"], "filtered_resps": reply,
                                     "token_counts": [{"input_tokens": 49, "output_tokens": 2, "reasoning_tokens": 0}],
                                     **utils.process_results(d, [reply]), "input": utils.doc_to_text(d)}))
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files


def test_lmms_sample_logs_import_into_the_report_with_the_same_accuracy(evaluated, capsys):
    folder, wh, tmp = evaluated["folder"], evaluated["wh"], evaluated["tmp"]
    sloppy = {r["question_id"]: r["response"] for r in wh.rows(EVAL_RESPONSES) if r["model"] == "sloppy"}
    files = _lmms_sample_log(folder, sloppy, tmp / "lmms_out" / "sloppy")
    assert main(["lmms-import", "--benchmark", str(evaluated["root"]), "--model", "sloppy-lmms",
                 "--warehouse", str(wh.path), "--samples", *map(str, files)]) == 0
    assert f"imported {N_ITEMS} replies" in capsys.readouterr().out
    data, _ = report_for(wh, "lmmsbench", store=False)
    assert set(data.scores) == {"good", "sloppy", "sloppy-lmms"}
    assert {t: s.accuracy for t, s in data.scores["sloppy-lmms"].items()} == \
           {t: s.accuracy for t, s in data.scores["sloppy"].items()}
    assert data.scores["sloppy-lmms"]["Human_Count"].n_unparsed == 1
    bad = tmp / "bad.jsonl"
    bad.write_text('{"doc_id": 0}\n')
    assert main(["lmms-import", "--benchmark", str(evaluated["root"]), "--model", "x", "--warehouse", str(wh.path),
                 "--samples", str(bad)]) == 2
    assert f"{bad}:1: not an lmms-eval sample of an hvbench task" in capsys.readouterr().err
    bad.write_text(json.dumps({"doc_id": 0, "input": "a prompt of another benchmark", "filtered_resps": "A"}) + "\n")
    assert main(["lmms-import", "--benchmark", str(evaluated["root"]), "--model", "x", "--warehouse", str(wh.path),
                 "--samples", str(bad)]) == 2
    assert f"warning {bad}:1: question 'a prompt of another benchmark' is not in benchmark" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("lmms_eval") is None,
                    reason="lmms-eval is not installed: it is an optional extra (pip install 'hvbench-assets[lmms]'); "
                           "lmms-eval 0.7.3 requires torch>=2.1 with CUDA wheels, wandb, peft and ~60 other packages")
def test_lmms_eval_runs_the_export_against_a_loopback_server_and_scores_like_hvbench_eval(evaluated):
    folder, wh, tmp, server = evaluated["folder"], evaluated["wh"], evaluated["tmp"], evaluated["server"]
    out = tmp / "lmms_run"
    env = {**os.environ, "OPENAI_API_KEY": "EMPTY", "OPENAI_API_BASE": server.base_url}
    proc = subprocess.run([sys.executable, "-m", "lmms_eval", "--model", "openai",
                           "--model_args", f"model_version=good,base_url={server.base_url},api_key=EMPTY,max_frames_num=4,pass_video_url=True",
                           "--tasks", "hvbench_lmmsbench", "--include_path", str(folder.parent),
                           "--output_path", str(out), "--log_samples", "--batch_size", "1"],
                          capture_output=True, text=True, env=env, timeout=900)
    files = sorted(out.rglob("*_samples_*.jsonl"))
    assert proc.returncode == 0 and files, proc.stderr[-3000:]  # lmms-eval can exit 0 after an error
    assert main(["lmms-import", "--benchmark", str(evaluated["root"]), "--model", "good-lmms",
                 "--warehouse", str(wh.path), "--samples", *map(str, files)]) == 0
    data, _ = report_for(wh, "lmmsbench", store=False)
    assert {t: s.accuracy for t, s in data.scores["good-lmms"].items()} == \
           {t: s.accuracy for t, s in data.scores["good"].items()}
