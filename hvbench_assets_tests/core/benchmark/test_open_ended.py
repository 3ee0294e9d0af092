"""The open-ended format: reference answers and structured truths from an exported multiple-choice benchmark, its own
export folder, its lmms-eval group, and `hvbench eval --format open` against the loopback server as the answering
model and as the judge (scores, the judge's use, its cache, its agreement with the matcher)."""

from __future__ import annotations

import json

import pytest

from hvbench_assets.cli import main
from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.export import is_our_export
from hvbench_assets.core.benchmark.open_ended import export_open, is_open, open_folder, open_items
from hvbench_assets.core.evaluation import EVAL_RESPONSES
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.scoring.open_report import open_grading
from hvbench_assets.core.tasks.families.active_speaker_detection import MORE_THAN_ONE, NO_SPEAKER
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.core.evaluation.lmms_logs import lmms_sample_log, task_utils
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.open_answers import ITEMS, REPLIES, models_file, respond
from hvbench_assets.testkit.open_answers import mc_export as export_mine


@pytest.fixture(scope="module")
def mc_export(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("open")
    return export_mine(tmp / "benchmarks" / "mine", tmp)


def test_references_carry_the_structured_truth_the_task_writes(mc_export):
    found = {o.item.question_id: o for o in open_items(load_benchmark(mc_export))}
    assert {q: (o.kind, o.truth, o.reference) for q, o in found.items()} == {
        "hc0": ("count", 3, "3"), "atd0": ("time_span", [3, 7], "From 3 s to 7 s"), "tsa0": ("time", 5, "At 5 s"),
        "asd0": ("person", 2, "Person 2"), "er0": ("emotion", ["happy"], "The person looks happy."),
        "h2t0": ("text", None, "The person is wearing a red coat.")}


def test_the_open_export_is_its_own_folder_in_the_published_layout(mc_export):
    bench = load_benchmark(mc_export)
    folder = open_folder(mc_export)
    assert folder == mc_export.parent / "mine_open"
    result = export_open(bench, folder)
    assert is_our_export(folder) and not result.left_out
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == "open" and manifest["source_fingerprint"] == bench.fingerprint
    assert manifest["answer_kinds"]["Human2Text"] == {"text": 1} and manifest["answer_kinds"]["Human_Count"] == {"count": 1}
    loaded = load_benchmark(folder)
    assert not loaded.issues and loaded.video_problem is None and all(is_open(i) for i in loaded.items)
    line = json.loads((folder / "Appearance_Time_Detection.jsonl").read_text())
    assert line["Reference"] == "From 3 s to 7 s" and line["Truth_kind"] == "time_span" and line["Truth"] == [3, 7]
    assert line["Answer"] == "B" and "Option B: {From 3 s to 7 s}" in line["choices"]  # still a readable MC line


def test_eval_open_grades_by_matcher_and_judge_caches_the_judge_and_reports_agreement(mc_export, tmp_path, capsys):
    server = FakeOpenAIServer(responder=respond).start()
    wh = tmp_path / "wh.duckdb"
    try:
        mf = models_file(tmp_path / "models.toml", server.base_url)

        def run(*models: str) -> int:
            return main(["eval", "--benchmark", str(mc_export), "--format", "open", *sum((["--model", m] for m in models), []),
                         "--judge", "judge", "--frames", "2", "--circular", "--warehouse", str(wh), "--models-file",
                         str(mf), "--no-progress"])

        assert run("good", "poor") == 0
        first = list(server.requests)
        assert run("good", "poor") == 0  # resumed: nothing asked again
        assert len(server.requests) == len(first)
        assert run("good-twin") == 0  # the same replies: the judge's grades come from the call cache
        twin = server.requests[len(first):]
    finally:
        server.stop()
    n = len(ITEMS)
    asked = [r for r in first if r.model != "judge"]
    assert len(asked) == 2 * n  # one request per item and model: no options to rotate
    assert all("Option" not in r.prompt and "Your answer:" in r.prompt for r in asked)
    assert any("Answer with a number." in r.prompt for r in asked)
    assert sum(r.model == "judge" for r in first) == 2 * n  # the judge grades every reply (for the agreement)
    assert [r.model for r in twin] == ["good-twin"] * n  # no judge request the second time
    assert "6 open items, 5 with a structured truth" in capsys.readouterr().err

    rows = {(r["model"], r["question_id"]): r for r in Warehouse(wh).rows(EVAL_RESPONSES)}
    assert rows[("good", "er0")]["grade"] == "right" and rows[("good", "er0")]["judge_verdict"] == "wrong"
    assert rows[("good", "h2t0")]["method"] == "judge" and rows[("good", "h2t0")]["correct"]
    assert rows[("poor", "tsa0")]["method"] == "judge" and not rows[("poor", "tsa0")]["correct"]
    assert rows[("poor", "asd0")]["method"] == "ungradable" and rows[("poor", "asd0")]["status"] == "unparsed"
    assert rows[("poor", "hc0")]["grade_reason"] == "named 5, truth 3"

    data, _ = report_for(Warehouse(wh), "mine_open", store=False)
    acc = {m: {t: s.accuracy for t, s in per.items()} for m, per in data.scores.items()}
    assert acc["good"] == acc["good-twin"] == {t: 1.0 for _, t, _, _, _ in ITEMS}
    assert acc["poor"] == {"Human_Count": 0.0, "Appearance_Time_Detection": 0.0, "Time_of_Specific_Action": 0.0,
                           "Active_Speaker_Detection": 0.0, "Emotion_Recognition": 1.0, "Human2Text": 0.0}
    labels = {v.run_id: v.label for v in data.runs}
    graded = {g.label: g for g in open_grading(Warehouse(wh).rows(EVAL_RESPONSES), labels)}
    # by hand: good - matcher grades 5 (all right), the judge h2t0; the judge agrees on 4 of the 5 (not "cheerful");
    # poor - matcher 3 (hc0, atd0 wrong, er0 right), judge 2 (tsa0, h2t0 wrong), asd0 neither; the judge agrees on 3/3
    g = graded["good"]
    assert (g.replies, g.right, g.by_match, g.by_judge, g.ungraded, g.both, g.agree) == (6, 6, 5, 1, 0, 5, 4)
    p = graded["poor"]
    assert (p.replies, p.right, p.by_match, p.by_judge, p.ungraded, p.both, p.agree) == (6, 1, 3, 2, 1, 3, 3)
    assert graded["all runs"].both == 13 and graded["all runs"].agree == 11
    section = next(md for md, _ in data.sections if md.startswith("## Open-ended grading"))
    assert "| poor | 6 | 16.7 | 3 | 2 | 1 | 100.0 (3/3) |" in section
    assert "| good | 6 | 100.0 | 5 | 1 | 0 | 80.0 (4/5) |" in section


def test_lmms_export_of_the_open_format(mc_export, tmp_path):
    assert main(["lmms-export", "--benchmark", str(mc_export), "--format", "open", "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / "hvbench_mine_open"
    assert (folder / "hvbench_mine_open.yaml").is_file()
    docs = {d["question_id"]: d for f in (folder / "data").glob("*.jsonl")
            for d in map(json.loads, f.read_text().splitlines())}
    assert docs["hc0"]["format"] == "open" and docs["hc0"]["truth"] == 3 and "Option" not in docs["hc0"]["prompt"]
    utils = task_utils(folder)
    for qid, reply in REPLIES["good"].items():
        result = utils.process_results(docs[qid], [reply])
        # the matcher's verdicts; free text (h2t0) needs the judge, which lmms-eval does not run: ungradable
        assert result == ({"hvbench_accuracy": 0.0, "hvbench_unparsed": 1.0} if qid == "h2t0"
                          else {"hvbench_accuracy": 1.0, "hvbench_unparsed": 0.0})
    assert utils.process_results(docs["hc0"], ["5 people"])["hvbench_accuracy"] == 0.0
    # its sample logs import as a run graded by the same matcher
    files = lmms_sample_log(folder, REPLIES["poor"], tmp_path / "lmms_out")
    wh = tmp_path / "wh.duckdb"
    assert main(["lmms-import", "--benchmark", str(open_folder(mc_export)), "--model", "poor-lmms",
                 "--warehouse", str(wh), "--samples", *map(str, files)]) == 0
    rows = {r["question_id"]: r for r in Warehouse(wh).rows(EVAL_RESPONSES)}
    assert {q: (r["grade"], r["correct"]) for q, r in rows.items()} == {
        "hc0": ("wrong", False), "atd0": ("wrong", False), "tsa0": ("ungradable", False),
        "asd0": ("ungradable", False), "er0": ("right", True), "h2t0": ("ungradable", False)}


def test_eval_format_all_asks_the_three_formats_and_the_report_shows_them_side_by_side(mc_export, tmp_path, monkeypatch):
    """One command evaluates a model on all three formats; the multiple-choice report, written last, shows each
    format's accuracy per task and the open-ended grading with its judge agreement."""
    right = {q: a for q, _, _, _, a in ITEMS}

    def every_format(req) -> str:
        if req.model == "judge" or "Option A:" not in req.prompt and "Answer yes or no" not in req.prompt:
            return respond(req)  # the judge, or an open question: the scripted replies
        if "Answer yes or no" in req.prompt:
            return "yes"  # right on half of the statements
        qid = next(q for q, _, question, _, _ in ITEMS if f"Question: {question}\n" in req.prompt)
        return right[qid] if req.model == "good" else "A"

    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "data"))
    wh = tmp_path / "wh.duckdb"
    with FakeOpenAIServer(responder=every_format) as server:
        mf = models_file(tmp_path / "models.toml", server.base_url)
        assert main(["eval", "--benchmark", str(mc_export), "--format", "all", "--model", "good", "--model", "poor",
                     "--judge", "judge", "--frames", "2", "--warehouse", str(wh), "--models-file", str(mf),
                     "--no-progress", "--report"]) == 0
    names = {r["benchmark"] for r in Warehouse(wh).rows(EVAL_RESPONSES)}
    assert names == {"mine", "mine_yesno", "mine_open"}
    report = (tmp_path / "data" / "reports" / "mine" / "report.md").read_text()
    formats = report.split("## Formats", 1)[1].split("\n## ", 1)[0]
    # good: every option right (6/6), "yes" to the 12 statements (6/12), the open replies all right (6/6)
    assert "| all | 6/6 (100 %) | 6/12 (50 %) | 6/6 (100 %) |" in formats
    # poor: "A" right on tsa0, er0 and h2t0 (3/6); open: only er0 right (as in the open-format test)
    assert "| all | 3/6 (50 %) | 6/12 (50 %) | 1/6 (17 %) |" in formats
    assert "| HC | 0/1 (0 %) | 1/2 (50 %) | 0/1 (0 %) |" in formats
    grading = report.split("## Open-ended grading", 1)[1]
    assert "| good | 6 | 100.0 | 5 | 1 | 0 | 80.0 (4/5) |" in grading
    assert (tmp_path / "data" / "reports" / "mine_open" / "report.md").is_file()
