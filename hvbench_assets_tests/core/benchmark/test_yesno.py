"""The yes/no format: statements from an exported multiple-choice benchmark (balanced per task, deterministic), its
own export folder and manifest, its lmms-eval group, and `hvbench eval --format yesno` against the loopback server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from hvbench_assets.cli import main
from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.export import export_benchmark, is_our_export
from hvbench_assets.core.benchmark.yesno import SOURCE_FIELD, export_yesno, is_yesno, statements, yesno_folder
from hvbench_assets.core.evaluation import EVAL_RESPONSES
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.bench_factory import ITEMS_PER_TASK, SPEC, make_benchmark
from hvbench_assets_tests.core.evaluation.lmms_logs import lmms_sample_log, task_utils
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.media_factory import moving_square_video

TEXTS = ["one person", "two people", "three people", "four people", "five people"]


def mc_item(qid, task, video, n_options, answer):
    return {"question_id": qid, "task": task, "question": f"How many people appear in clip {qid}?", "answer": answer,
            "video_path": str(video), "options": [{"letter": "ABCDE"[k], "text": TEXTS[k]} for k in range(n_options)],
            "review_state": "accepted", "leakage": "kept"}


@pytest.fixture(scope="module")
def mc_export(tmp_path_factory):
    """An export of 5 Human_Count items (4 options), 3 ASD items (5 options) and 1 AVSM item (2 options)."""
    tmp = tmp_path_factory.mktemp("yesno")
    video = moving_square_video(tmp / "clip.mp4", seconds=1.0)
    items = ([mc_item(f"hc{i}", "Human_Count", video, 4, "ABCD"[i % 4]) for i in range(5)]
             + [mc_item(f"asd{i}", "Active_Speaker_Detection", video, 5, "E") for i in range(3)]
             + [mc_item("avsm0", "Audio_Visual_Speaker_Matching", video, 2, "A")])
    folder = tmp / "benchmarks" / "mine"
    export_benchmark(items, folder, {"benchmark": "mine"})
    return folder


def test_statements_are_balanced_per_task_and_name_the_truth_and_one_distractor(mc_export):
    bench = load_benchmark(mc_export)
    found = statements(bench)
    assert len(found) == 2 * len(bench.items)
    counts = Counter((s.task, s.truth) for s in found)
    assert counts == {("Human_Count", "yes"): 5, ("Human_Count", "no"): 5, ("Active_Speaker_Detection", "yes"): 3,
                      ("Active_Speaker_Detection", "no"): 3, ("Audio_Visual_Speaker_Matching", "yes"): 1,
                      ("Audio_Visual_Speaker_Matching", "no"): 1}
    by_source = {i.question_id: i for i in bench.items}
    for s in found:
        source = by_source[s.source_question_id]
        assert (s.option == source.answer) == (s.truth == "yes")
        assert s.question == f"{source.question} Is the answer: {source.option_text(s.option)}?"
    # the distractor is drawn per item (not always the first wrong option), the true id is drawn too
    assert len({s.option for s in found if s.task == "Human_Count" and s.truth == "no"}) > 1
    assert {s.question_id.rsplit("_", 1)[1] for s in found if s.truth == "yes"} == {"s1", "s2"}
    assert statements(load_benchmark(mc_export)) == found  # no randomness outside the seeded draws


def test_the_yesno_export_is_its_own_folder_in_the_published_layout(mc_export):
    bench = load_benchmark(mc_export)
    folder = yesno_folder(mc_export)
    assert folder == mc_export.parent / "mine_yesno"
    result = export_yesno(bench, folder)
    assert is_our_export(folder) and not result.left_out and len(list(folder.glob("*.jsonl"))) == len(TASKS)
    first = {p.name: p.read_text() for p in folder.glob("*.jsonl")}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == "yesno" and manifest["source"] == str(mc_export.resolve())
    assert manifest["source_fingerprint"] == bench.fingerprint and manifest["n_items"] == 18
    assert manifest["balance"]["Human_Count"] == {"yes": 5, "no": 5}
    assert manifest["statements"]["avsm0_s1"]["source_question_id"] == "avsm0"

    loaded = load_benchmark(folder)
    assert not loaded.issues and loaded.video_problem is None and len(loaded.items) == 18
    assert all(is_yesno(i) and [(o.letter, o.text) for o in i.options] == [("A", "yes"), ("B", "no")]
               for i in loaded.items)
    assert all(i.video_path.is_file() for i in loaded.items)
    truth = {s.question_id: s.truth for s in statements(bench)}
    assert {i.question_id: "yes" if i.answer == "A" else "no" for i in loaded.items} == truth
    assert {i.extra[SOURCE_FIELD] for i in loaded.items} == {i.question_id for i in bench.items}

    export_yesno(bench, folder)  # again: the same files
    assert {p.name: p.read_text() for p in folder.glob("*.jsonl")} == first


class _FunctionTagLoader(yaml.SafeLoader):
    """lmms-eval's YAML loader turns `!function utils.x` into the function; here its name is enough."""


_FunctionTagLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _statement_of(prompt: str, found) -> object:
    return next(s for s in found if f"Question: {s.question}\n" in prompt)


def test_eval_and_lmms_export_of_the_yesno_format(tmp_path, capsys):
    root = tmp_path / "toy"
    make_benchmark(root)
    found = statements(load_benchmark(root))

    def respond(req):
        s = _statement_of(req.prompt, found)
        if req.model == "truthful":
            return "Yes, it is." if s.truth == "yes" else "No."
        if req.model == "yes-man":
            return "**Yes**"
        return "I'm sorry, I cannot watch videos." if s.source_question_id.endswith("_0") else "Answer: no"

    server = FakeOpenAIServer(responder=respond).start()
    try:
        mf = tmp_path / "models.toml"
        mf.write_text("\n".join(f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{server.base_url}"\n'
                                for n in ("truthful", "yes-man", "naysayer")))
        wh = tmp_path / "wh.duckdb"
        assert main(["eval", "--benchmark", str(root), "--format", "yesno", "--model", "truthful", "--model", "yes-man",
                     "--model", "naysayer", "--frames", "2", "--circular", "--warehouse", str(wh), "--models-file", str(mf),
                     "--no-progress"]) == 0
    finally:
        server.stop()
    n = len(SPEC) * ITEMS_PER_TASK
    assert len(server.requests) == 3 * 2 * n  # one request per statement and model: no rotations of yes/no
    assert all(r.prompt.endswith("Answer yes or no. Your answer:") and "Option A" not in r.prompt
               for r in server.requests)
    err = capsys.readouterr().err
    assert f"{root.parent / 'toy_yesno'}: {2 * n} yes/no statements from {n} items" in err
    data, _ = report_for(Warehouse(wh), "toy_yesno", store=False)
    for task, _ in SPEC:
        assert data.scores["truthful"][task].accuracy == pytest.approx(1.0)
        assert data.scores["yes-man"][task].accuracy == pytest.approx(0.5)  # "yes" is right for half of each task
        assert data.scores["naysayer"][task].accuracy == pytest.approx(1 / 3)  # 2 of 6 refused, "no" right on 2 of 4
        assert data.scores["naysayer"][task].n_unparsed == 2
    rows = Warehouse(wh).rows(EVAL_RESPONSES)
    assert {r["n_options"] for r in rows} == {2} and {r["method"] for r in rows} == {"leading_word", "refusal"}

    # the same statements as an lmms-eval group of its own
    assert main(["lmms-export", "--benchmark", str(root), "--format", "yesno", "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / "hvbench_toy_yesno"
    group = yaml.load((folder / "hvbench_toy_yesno.yaml").read_text(), Loader=_FunctionTagLoader)
    assert group["group"] == "hvbench_toy_yesno" and "hvbench_toy_yesno_hc" in group["task"]
    task = yaml.load((folder / "hvbench_toy_yesno_hc.yaml").read_text(), Loader=_FunctionTagLoader)
    assert task["process_results"] == "utils.process_results" and task["metadata"]["prompt"] == "yes-no-v1"
    docs = [json.loads(line) for line in Path(task["dataset_kwargs"]["data_files"]["test"]).read_text().splitlines()]
    assert len(docs) == 2 * ITEMS_PER_TASK and {d["format"] for d in docs} == {"yesno"}
    sent = {r.prompt for r in server.requests}
    utils = task_utils(folder)
    for d in docs:
        assert utils.doc_to_text(d) in sent  # the very prompt hvbench eval sent
        truth = "yes" if d["answer"] == "A" else "no"
        assert utils.process_results(d, ["Yes." if truth == "yes" else "no"])["hvbench_accuracy"] == 1.0
        assert utils.process_results(d, ["Yes"])["hvbench_accuracy"] == float(truth == "yes")
        assert utils.process_results(d, ["I can't tell"])["hvbench_unparsed"] == 1.0
    # and its lmms-eval sample logs import as a run scored by the yes/no rules
    all_docs = [json.loads(line) for f in (folder / "data").glob("*.jsonl") for line in f.read_text().splitlines()]
    files = lmms_sample_log(folder, {d["question_id"]: "Yes" for d in all_docs}, tmp_path / "lmms_out")
    assert main(["lmms-import", "--benchmark", str(root.parent / "toy_yesno"), "--model", "yes-lmms",
                 "--warehouse", str(wh), "--samples", *map(str, files)]) == 0
    data, _ = report_for(Warehouse(wh), "toy_yesno", store=False)
    assert {t: s.accuracy for t, s in data.scores["yes-lmms"].items()} == \
           {t: s.accuracy for t, s in data.scores["yes-man"].items()}
