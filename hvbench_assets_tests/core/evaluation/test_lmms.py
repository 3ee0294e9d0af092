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
from hvbench_assets_tests.core.evaluation.lmms_logs import lmms_sample_log, lmms_tasks, task_utils

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


def _docs(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((folder / "data").glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_exported_task_asks_the_same_prompt_and_scores_like_hvbench_eval(evaluated):
    folder, wh = evaluated["folder"], evaluated["wh"]
    group = (folder / "hvbench_lmmsbench.yaml").read_text()
    assert group.startswith("group: hvbench_lmmsbench") and "  - hvbench_lmmsbench_er\n" in group
    task_yaml = (folder / "hvbench_lmmsbench_asd.yaml").read_text()
    assert "process_results: !function utils.process_results" in task_yaml and "dataset_path: json" in task_yaml
    utils = task_utils(folder)
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


def test_lmms_sample_logs_import_into_the_report_with_the_same_accuracy(evaluated, capsys):
    folder, wh, tmp = evaluated["folder"], evaluated["wh"], evaluated["tmp"]
    sloppy = {r["question_id"]: r["response"] for r in wh.rows(EVAL_RESPONSES) if r["model"] == "sloppy"}
    files = lmms_sample_log(folder, sloppy, tmp / "lmms_out" / "sloppy")
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
    err = capsys.readouterr().err
    assert f"{bad}: cannot tell which task its samples answer" in err and "hvbench_lmmsbench_er" in err
    bad.write_text(json.dumps({"input": "a prompt of another benchmark", "filtered_resps": "A"}) + "\n")
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


def _twin_benchmark(root: Path) -> list[dict]:
    """make_benchmark with Attitude_Recognition items 1 and 2 sharing question, options and answer (their clips
    differ): one prompt for two items, as a generated question with fixed options gives. Returns the AR lines."""
    make_benchmark(root)
    path = root / "Attitude_Recognition.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[2].update({k: lines[1][k] for k in ("Question", "choices", "Answer")})
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return lines


def test_items_sharing_a_prompt_each_get_their_own_reply(tmp_path, capsys):
    root = tmp_path / "twins"
    ar = _twin_benchmark(root)
    assert main(["lmms-export", "--benchmark", str(root), "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / "hvbench_twins"
    docs = _docs(folder)
    twin_1, twin_2 = (next(d for d in docs if d["question_id"] == ar[i]["Question_id"]) for i in (1, 2))
    assert twin_1["prompt"] == twin_2["prompt"] and twin_1["video"] != twin_2["video"]
    wrong = next(letter for letter in twin_1["letters"] if letter != twin_1["answer"])
    replies = {d["question_id"]: d["answer"] for d in docs}
    replies[twin_2["question_id"]] = wrong  # twin 1 right, twin 2 wrong: 2/3 on AR
    files = lmms_sample_log(folder, replies, tmp_path / "out")
    wh = tmp_path / "wh.duckdb"
    assert main(["lmms-import", "--benchmark", str(root), "--model", "m", "--warehouse", str(wh),
                 "--samples", *map(str, files)]) == 0
    rows = {r["question_id"]: r for r in Warehouse(wh).rows(EVAL_RESPONSES)}
    assert len(rows) == len(docs)
    assert (rows[twin_1["question_id"]]["response"], rows[twin_1["question_id"]]["correct"]) == (twin_1["answer"], True)
    assert (rows[twin_2["question_id"]]["response"], rows[twin_2["question_id"]]["correct"]) == (wrong, False)
    data, _ = report_for(Warehouse(wh), "twins", store=False)
    lmms_mean = {}  # what lmms-eval reports: the mean of its per-sample metric, per task file
    for f in files:
        values = [json.loads(line)["hvbench_accuracy"] for line in f.read_text().splitlines()]
        lmms_mean[f.name] = sum(values) / len(values)
    ours = {t: s.accuracy for t, s in data.scores["m"].items()}
    assert ours["Attitude_Recognition"] == pytest.approx(2 / 3)
    assert sorted(ours.values()) == pytest.approx(sorted(lmms_mean.values()))

    # without doc_id only the prompt is left: the twins are skipped with a warning, every other sample imported
    no_ids = lmms_sample_log(folder, replies, tmp_path / "no_ids", doc_ids=False)
    assert main(["lmms-import", "--benchmark", str(root), "--model", "m2", "--warehouse", str(wh),
                 "--samples", *map(str, no_ids)]) == 0
    out = capsys.readouterr()
    assert f"imported {len(docs) - 2} replies" in out.out
    assert f"2 items share its prompt ({twin_1['question_id']}, {twin_2['question_id']}): cannot tell" in out.err

    # a doc_id whose item's prompt is not the logged one, while other items have it: refused, the candidates named
    ar_log = next(f for f in files if f.name.endswith("_samples_hvbench_twins_ar.jsonl"))
    lines = ar_log.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "input": twin_1["prompt"]})
    ar_log.write_text("\n".join(lines) + "\n")
    assert main(["lmms-import", "--benchmark", str(root), "--model", "m3", "--warehouse", str(wh),
                 "--samples", str(ar_log)]) == 2
    err = capsys.readouterr().err
    assert f"{ar_log}:1: ambiguous: doc_id 0 of Attitude_Recognition is {ar[0]['Question_id']}" in err
    assert f"could be any of {ar[0]['Question_id']}, {twin_1['question_id']}, {twin_2['question_id']}" in err


def test_a_reimport_replaces_the_run(tmp_path, capsys):
    root = tmp_path / "again"
    make_benchmark(root)
    assert main(["lmms-export", "--benchmark", str(root), "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / "hvbench_again"
    replies = {d["question_id"]: "A" for d in _docs(folder)}
    files = lmms_sample_log(folder, replies, tmp_path / "out")
    wh = tmp_path / "wh.duckdb"
    args = ["lmms-import", "--benchmark", str(root), "--model", "m", "--warehouse", str(wh), "--samples"]
    assert main([*args, *map(str, files)]) == 0
    assert main([*args, str(files[0])]) == 0  # one task only this time: the other tasks' rows go
    task = next(stem for stem, name in lmms_tasks(folder).items() if files[0].name.endswith(f"_samples_{name}.jsonl"))
    assert {r["task"] for r in Warehouse(wh).rows(EVAL_RESPONSES)} == {task}
    assert main([*args, str(files[0]), str(files[0])]) == 2
    assert f"{files[0]}:1: a second reply to" in capsys.readouterr().err
