"""Benchmark assembly end to end on real questions of the duo clip (real_labels.DUO: ASD, AVAD from offline labels)
plus one planted question whose right option is written in the question text. A loopback OpenAI-compatible
server plays a blind text model that picks the option quoted by the question, else "A"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import dagster as dg
import pytest

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.explain import explain_question
from hvbench_assets.core.benchmark.repair import REPAIR_CODE_VERSION
from hvbench_assets.core.benchmark.tables import BLIND_ANSWERS, EXPORT_ITEMS, LEAKAGE_VERDICTS, QUESTION_POOL, TEXT_BIAS
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.curation.store import record_decision
from hvbench_assets.core.evaluation import EVAL_RESPONSES, EvalConfig, evaluate, mllm_answerer
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS, step_rows
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.defs.benchmark.assets import benchmark_export, blind_leakage, question_pool
from hvbench_assets.defs.curation.assets import reviewed_questions
from hvbench_assets.defs.evaluation.assets import eval_responses, review_baseline
from hvbench_assets.defs.resources import (
    BenchmarkResource,
    EvaluationResource,
    MllmResource,
    SettingsResource,
    WarehouseResource,
)
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.settings_table import model_registry
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.real_labels import DUO, labelled

BENCH = [question_pool, blind_leakage, benchmark_export]  # partitioned by benchmark name


def run_bench(resources, name: str):
    """reviewed_questions (unpartitioned), then the benchmark assets for partition `name`."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("eval_benchmarks", [name])
    assert dg.materialize([reviewed_questions], resources=resources, instance=instance).success
    return dg.materialize(BENCH, partition_key=name, resources=resources, instance=instance)
TASKS_USED = [a for a in TASK_ASSETS if a.key.to_user_string() in ("active_speaker_detection",
                                                                   "audio_visual_alignment_detection")]
LEAKY = "The person in the red box is smiling broadly. What is the person's expression?"


def blind_text_model(req) -> FakeReply:
    """Quotes back the option the question already contains (leakage); otherwise answers A."""
    question = re.search(r"Question: (.*)", req.prompt).group(1)
    for letter, text in re.findall(r"Option ([A-Z]): (.*)", req.prompt):
        if text.strip() and text.strip() in question:
            return FakeReply(text=letter)
    return FakeReply(text="A")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = labelled(tmp_path_factory, DUO, "duo")
    _, wh = materialize(root, "duo", TASKS_USED)
    asd = wh.rows(QUESTIONS, video_id="duo", abbrev="ASD")[0]
    planted = {**asd, "question_id": "qplantedleak0001", "task": "Emotion_Recognition", "abbrev": "ER",
               "question": LEAKY, "answer": "B", "answer_text": "smiling broadly", "marking": {"kind": "red_box"},
               "rule_params": {"polarity": "positive"},
               "options": [{"letter": "A", "text": "crying", "origin": "model"},
                           {"letter": "B", "text": "smiling broadly", "origin": "truth"},
                           {"letter": "C", "text": "angry", "origin": "model"},
                           {"letter": "D", "text": "asleep", "origin": "model"}]}
    wh.replace(QUESTIONS, {"video_id": "duo", "task": "Emotion_Recognition"}, [planted])
    record_decision(wh, asd, "rev1", "accept", blind_choice=asd["answer"])
    record_decision(wh, planted, "rev1", "accept", blind_choice="A")  # the reviewer's blind pick was wrong
    server = FakeOpenAIServer()
    server.__enter__()
    server.responder = blind_text_model
    models = root / "models.toml"
    models.write_text(f'[models.blind]\nmodel_id = "blind"\nbase_url = "{server.base_url}"\n')
    resources = {
        "settings": SettingsResource(data_dir=str(root / "data")),
        "warehouse": WarehouseResource(path=str(root / "wh.duckdb")),
        "mllm": MllmResource(models_file=str(models), max_attempts=1, backoff_s=0.01),
        "benchmark": BenchmarkResource(blind_models="blind"),
    }
    result = run_bench(resources, "ours")
    assert result.success
    yield {"root": root, "wh": wh, "server": server, "resources": resources, "result": result, "asd": asd,
           "folder": root / "data" / "benchmarks" / "ours", "models": models}
    server.__exit__(None, None, None)


def test_leaking_question_is_removed_and_fair_ones_kept(built):
    wh = built["wh"]
    verdicts = {v["question_id"]: v for v in wh.rows(LEAKAGE_VERDICTS, benchmark="ours")}
    assert verdicts["qplantedleak0001"]["removed"] and verdicts["qplantedleak0001"]["n_correct"] == 4
    assert verdicts["qplantedleak0001"]["p_value"] == pytest.approx(0.25 ** 4)
    kept = [v for q, v in verdicts.items() if q != "qplantedleak0001"]
    assert {v["task"] for v in kept} == {"Active_Speaker_Detection", "Audio_Visual_Alignment_Detection"}
    assert all(not v["removed"] and v["n_correct"] == 1 for v in kept)  # "A" under every rotation: right once
    answers = wh.rows(BLIND_ANSWERS, benchmark="ours")
    assert len(answers) == 4 + 4 + 3 == len(built["server"].requests)  # every question x rotation, no frames
    assert all(not r.images for r in built["server"].requests) and {a["model"] for a in answers} == {"blind"}
    meta = built["result"].asset_materializations_for_node("blind_leakage")[0].metadata
    assert meta["removed"].value == 1 and "qplantedleak0001" in meta["most_guessable"].value
    checks = {c.check_name: c for c in built["result"].get_asset_check_evaluations()}
    assert set(checks) == {"answer_letter_balance", "leakage_removal_share", "export_file_count"}
    assert all(c.passed for c in checks.values())
    share = checks["leakage_removal_share"].metadata
    assert share["pooled"].value == 3 and share["removed"].value == 1
    assert checks["export_file_count"].metadata["task_files"].value == len(TASKS)
    assert checks["export_file_count"].metadata["videos"].value == 2
    report = (built["root"] / "data" / "reports" / "ours" / "leakage.md").read_text()
    assert "## Removed" in report and "| qplantedleak0001 | Emotion_Recognition | 4/4 right without video" in report
    # text bias: one row per pooled question; three questions are too few to learn from
    bias = wh.rows(TEXT_BIAS, benchmark="ours")
    assert {b["question_id"] for b in bias} == set(verdicts) and all(b["p_true"] is None for b in bias)
    assert "not scored" in meta["text_bias"].value and "## Text bias" in report


def test_rerun_sends_no_request_and_pool_metadata_counts_per_task(built):
    before = len(built["server"].requests)
    again = run_bench(built["resources"], "ours")
    assert again.success and len(built["server"].requests) == before
    versions = [r.asset_materializations_for_node("benchmark_export")[0].tags["dagster/data_version"]
                for r in (built["result"], again)]
    assert versions[0] == versions[1]  # the same export content: evaluations are not marked stale
    pool = {r["question_id"]: r for r in built["wh"].rows(QUESTION_POOL, benchmark="ours")}
    assert all(r["selected"] for r in pool.values()) and pool["qplantedleak0001"]["stratum"] == "positive"
    meta = again.asset_materializations_for_node("question_pool")[0].metadata
    assert "| ASD | 153 | 1 | 1 |" in meta["per_task"].value


def test_export_layout_manifest_and_round_trip_evaluation(built):
    folder, wh, asd = built["folder"], built["wh"], built["asd"]
    assert sorted(p.name for p in folder.glob("*.jsonl")) == sorted(f"{t.name}.jsonl" for t in TASKS)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["n_items"] == 2 and manifest["counts"]["Active_Speaker_Detection"] == 1
    assert manifest["removed_by_leakage"][0]["question_id"] == "qplantedleak0001"
    states = {i["task"]: i["review_state"] for i in manifest["items"]}
    assert states == {"Active_Speaker_Detection": "accepted", "Audio_Visual_Alignment_Detection": "not_reviewed"}
    assert manifest["include_unreviewed"] is False and manifest["leakage"]["models"] == ["blind"]
    assert all(i["leakage"].startswith("kept: 1/") for i in manifest["items"])
    assert {lab["table"] for lab in manifest["labels"]} >= {"speaker_scores", "human_tracks"}
    assert manifest["text_bias"]["per_task"]["Active_Speaker_Detection"]["items"] == 1
    line = json.loads((folder / "Active_Speaker_Detection.jsonl").read_text())
    assert line["Video"] == "Active_Speaker_Detection/Active_Speaker_Detection_1.mp4" and line["Question_id"] == asd["question_id"]
    assert line["choices"].startswith("Option A: {") and line["Answer"] == asd["answer"]
    assert len(wh.rows(EXPORT_ITEMS, benchmark="ours")) == 2

    bench = load_benchmark(folder, name="ours")
    assert not bench.issues and bench.video_problem is None and len(bench.items) == 2
    truth = {i.question: i.answer for i in bench.items}
    wrong_avad = next(i for i in bench.items if i.task == "Audio_Visual_Alignment_Detection")
    wrong = next(letter for letter in wrong_avad.letters if letter != wrong_avad.answer)

    def seeing_model(req):  # right on ASD, wrong on AVAD: 50 % overall
        q = re.search(r"Question: (.*)", req.prompt).group(1)
        return FakeReply(text=wrong if q == wrong_avad.question else truth[q])

    built["server"].responder = seeing_model
    answerer = mllm_answerer(wh, model_registry(str(built["models"])))
    out = evaluate(bench, answerer, wh, EvalConfig(model="blind", n_frames=2), progress=False)
    assert out.status == "complete"
    rows = wh.query("SELECT task, correct FROM eval_responses WHERE run_id = ?", [out.run_id])
    assert sorted((r["task"], r["correct"]) for r in rows) == [("Active_Speaker_Detection", True),
                                                               ("Audio_Visual_Alignment_Detection", False)]
    ev = EvaluationResource()
    human = review_baseline(wh, "ours", ev, built["resources"]["settings"])
    assert human == {"Active_Speaker_Detection": 1.0}  # only questions accepted as proposed count
    data, _ = report_for(wh, "ours", human=human, store=False)
    assert data.human is not None
    expl = explain_question(wh, asd["question_id"])
    assert [e["correct"] for e in expl["evaluations"]] == [True]
    assert expl["export"][0]["video"] == line["Video"] and expl["review"]["decisions"][0]["action"] == "accept"
    leak = explain_question(wh, "qplantedleak0001")["leakage"]
    assert leak["verdicts"][0]["removed"] and len(leak["answers"]) == 4


def test_every_item_carries_the_evidence_its_truth_rests_on_in_every_format(built, tmp_path):
    """Issue 50 item 4 on the duo clip's real labels. ASD: the span is the speaker's longest L7 run (seconds worked
    out here from the speaker_scores row and the stored box times), the boxes are both numbered people's stored L1
    face boxes at one frame inside it over the probe's size, the answer's person is the one its option names, and
    the label rows are named with the speaker's L7 row as the one deciding. AVAD: the cut to the clip's end, nobody,
    and why. The yes/no and open folders benchmark_export writes beside the export carry the same evidence, so do
    the lmms-eval docs (never the prompt), and the metadata counts each format."""
    from hvbench_assets.core.benchmark.formats import FORMAT_NAMES
    from hvbench_assets.core.evaluation.lmms import export_lmms_task
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE
    from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
    from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES
    from hvbench_assets_tests.real_labels import duo_speaker_track

    wh, asd, folder = built["wh"], built["asd"], built["folder"]
    probe = wh.rows(VIDEO_PROBE, video_id="duo")[0]
    size = [probe["width"], probe["height"]]
    speaker = duo_speaker_track(wh, "duo")
    ev = json.loads((folder / "Active_Speaker_Detection.jsonl").read_text())["Evidence"]
    row = wh.rows(SPEAKER_SCORES, video_id="duo", track_id=speaker)[0]
    first, last = row["first_frame"] + row["longest_run_start"], row["first_frame"] + row["longest_run_start"] + row["longest_run"] - 1
    times = {b["frame"]: b["t"] for b in wh.rows(HUMAN_TRACK_BOXES, video_id="duo", track_id=speaker)}
    assert row["speaking"] and (ev["span"], ev["video_id"]) == ("speaking", "duo")
    assert ev["span_s"] == [round(times[first], 2), round(times[last], 2)] and ev["span_s"][1] > ev["span_s"][0]
    assert ev["span_s"][0] <= ev["frame"]["t_s"] <= ev["span_s"][1] and ev["frame"]["size_px"] == size
    assert "fractions of the frame" in ev["box_units"]
    numbers = {int(t): n for t, n in asd["marking"]["numbers"].items()}  # drawn on the question video
    assert sorted(p["person"] for p in ev["people"]) == sorted(set(numbers.values())) and len(ev["people"]) == 2
    (said,) = [p for p in ev["people"] if p["answer"]]
    assert f"Person {said['person']}" == asd["answer_text"] and said["track_ids"] == [speaker]
    for p in ev["people"]:
        (b,) = wh.rows(HUMAN_TRACK_BOXES, video_id="duo", track_id=p["track_ids"][0], frame=ev["frame"]["index"])
        expected = [b["face_x1"] / size[0], b["face_y1"] / size[1], (b["face_x2"] - b["face_x1"]) / size[0],
                    (b["face_y2"] - b["face_y1"]) / size[1]]
        assert p["face"] == pytest.approx(expected, abs=1e-4) and all(0 <= v <= 1 for v in p["face"] + p["body"])
    rows = {(r["asset"], r["track_id"]): r for r in ev["label_rows"]}
    assert {("speaker_scores", speaker)} | {("human_tracks", t) for t in numbers} <= set(rows)
    assert [k for k, r in rows.items() if r["decides_answer"]] == [("speaker_scores", speaker)]
    assert all(r["changed_since_question"] is False and r["code_version"] for r in rows.values())
    assert ev["rests_on"].startswith("the one person whose L7") and "missing" not in ev

    avad = wh.rows(QUESTIONS, video_id="duo", abbrev="AVAD")[0]
    ev_avad = json.loads((folder / "Audio_Visual_Alignment_Detection.jsonl").read_text())["Evidence"]
    assert ev_avad["span_s"] == [round(avad["rule_params"]["build"]["cut_s"], 2), round(probe["duration_s"], 2)]
    assert ev_avad["people"] == [] and "frame" not in ev_avad and "nobody" in ev_avad["missing"]
    manifest = json.loads((folder / "manifest.json").read_text())["evidence"]
    assert manifest["per_task"]["Active_Speaker_Detection"] == {"items": 1, "span": 1, "boxes": 1, "label_rows": 1}

    by_id = {i.question_id: i.extra["Evidence"] for i in load_benchmark(folder).items}
    yesno = load_benchmark(folder.parent / "ours_yesno").items
    opened = load_benchmark(folder.parent / "ours_open").items
    assert len(yesno) == 4 and all(i.extra["Evidence"] == by_id[i.extra["Source_question_id"]] for i in yesno)
    assert len(opened) == 2 and all(i.extra["Evidence"] == by_id[i.question_id] for i in opened)
    lmms = export_lmms_task(load_benchmark(folder.parent / "ours_yesno"), tmp_path)
    docs = [json.loads(x) for p in (lmms / "data").glob("*.jsonl") for x in p.read_text().splitlines()]
    assert len(docs) == 4 and all(d["evidence"] == by_id[d["question_id"].rsplit("_", 1)[0]] for d in docs)
    assert not any("span" in d["prompt"] or "Evidence" in d["prompt"] for d in docs)

    meta = built["result"].asset_materializations_for_node("benchmark_export")[0].metadata
    assert meta["items_per_format"].value == {FORMAT_NAMES["mc"]: 2, "yes/no": 4, "open-ended": 2}
    assert meta["yesno_folder"].value.endswith("ours_yesno") and meta["open_folder"].value.endswith("ours_open")
    assert "| ASD | 1 | 2 | 1 | span 1/1, boxes 1/1 |" in meta["per_task"].value


def test_export_refuses_a_derived_partition_and_a_foreign_folder_beside_it(built):
    """benchmark_export of partition `ours_yesno` (a folder the export of `ours` wrote) fails saying so and leaves it
    as it was; a folder of someone else's where an export's open folder would go stops the export before it writes."""
    parent = built["folder"].parent
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("eval_benchmarks", ["ours_yesno", "theirs"])
    before = {p: p.read_bytes() for p in (parent / "ours_yesno").rglob("*") if p.is_file()}

    def failure(name: str) -> str:
        result = dg.materialize([benchmark_export], partition_key=name, resources=built["resources"],
                                instance=instance, raise_on_error=False)
        assert not result.success
        return next(e for e in result.all_events if e.is_step_failure).event_specific_data.user_failure_data.description

    assert "is a yes/no export written beside another benchmark's" in failure("ours_yesno")
    assert {p: p.read_bytes() for p in (parent / "ours_yesno").rglob("*") if p.is_file()} == before
    (parent / "theirs_open").mkdir()
    (parent / "theirs_open" / "notes.txt").write_text("not an export")
    assert "was not written by hvbench's export" in failure("theirs")
    assert not (parent / "theirs").exists() and not (parent / "theirs_yesno").exists()


def test_eval_responses_depends_on_its_own_benchmarks_export():
    (dep,) = [d for d in eval_responses.specs_by_key[dg.AssetKey("eval_responses")].deps
              if d.asset_key == dg.AssetKey("benchmark_export")]
    assert isinstance(dep.partition_mapping, dg.MultiToSingleDimensionPartitionMapping)
    assert dep.partition_mapping.partition_dimension_name == "benchmark"
    assert benchmark_export.partitions_def == eval_responses.partitions_def.get_partitions_def_for_dimension("benchmark")


def test_failed_export_leaves_the_previous_one_intact(built):
    folder = built["folder"]
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    # a real failure half-way: the process may not write a single byte (file size limit 0, as on a full disk)
    script = textwrap.dedent(f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from hvbench_assets.core.benchmark.export import export_benchmark
        items = {json.dumps([{"question_id": "qx", "task": "Human_Count", "question": "How many?",
                              "options": [{"letter": "A", "text": "3"}, {"letter": "B", "text": "4"}], "answer": "B",
                              "video_path": str(next(folder.rglob("*.mp4")))}])}
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        export_benchmark(items, {str(folder)!r}, {{"benchmark": "ours"}})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode != 0 and "File too large" in proc.stderr
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert not list(folder.parent.glob(".ours.*"))


def test_export_takes_the_corrected_answer_and_unreviewed_only_when_asked(tmp_path):
    """Contract 5 on hand-made reviewed rows: a corrected question is exported with the reviewer's answer, an
    unreviewed one only with include_unreviewed (and the manifest says so); no blind model: 'not tested'."""
    from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
    from hvbench_assets.testkit.media_factory import moving_square_video

    wh = WarehouseResource(path=str(tmp_path / "wh.duckdb")).get()
    video = moving_square_video(tmp_path / "q.mp4", seconds=1.0)
    opts = [{"letter": "A", "text": "3", "origin": "rule"}, {"letter": "B", "text": "4", "origin": "truth"},
            {"letter": "C", "text": "5", "origin": "rule"}]
    prov = {"backend": "rules", "model": None, "code_version": "t"}
    for vid, state in (("c1", "corrected"), ("c2", "unreviewed")):
        q = {"question_id": f"q{vid}", "video_id": vid, "task": "Human_Count", "abbrev": "HC", "status": "draft",
             "question": "How many people?", "options": opts, "answer": "B", "answer_text": "4",
             "video_path": str(video), "target_track_ids": [], "rule_params": {}, "label_rows": [], "rule_version": "1"}
        wh.replace(QUESTIONS, {"video_id": vid, "task": "Human_Count"}, [q], provenance=prov)
        wh.replace(REVIEWED_QUESTIONS, {"question_id": f"q{vid}"},
                   [{"video_id": vid, "task": "Human_Count", "abbrev": "HC", "content_hash": "h", "state": state,
                     "answer": "C" if state == "corrected" else "B", "answer_text": "5" if state == "corrected" else "4",
                     "options": opts, "reviewers": ["r"], "decision_ids": []}], provenance=prov)
    base = {"settings": SettingsResource(data_dir=str(tmp_path / "data")),
            "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")),
            "mllm": MllmResource(models_file=str(tmp_path / "none.toml"))}
    folder = tmp_path / "data" / "benchmarks" / "b"
    for include, expected in ((False, {"qc1": "C"}), (True, {"qc1": "C", "qc2": "B"})):
        res = dict(base, benchmark=BenchmarkResource(include_unreviewed=include))
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions("eval_benchmarks", ["b"])
        assert dg.materialize(BENCH, partition_key="b", resources=res, instance=instance).success
        lines = [json.loads(x) for x in (folder / "Human_Count.jsonl").read_text().splitlines()]
        assert {x["Question_id"]: x["Answer"] for x in lines} == expected  # qc1 stratum: count 5 -> 3-5
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["include_unreviewed"] is include
        assert ("unreviewed" in manifest["review_states_exported"]) is include
        assert all(i["leakage"].startswith("not tested: model registry file") for i in manifest["items"])
        # a human count over the whole clip: no person to box; here no probed length either, and the line says so
        evidence = [x["Evidence"] for x in lines]
        assert all(e["span"] == "clip" and e["span_s"] is None and e["people"] == [] for e in evidence)
        assert all("no video_probe duration" in e["missing"] and "nobody" in e["missing"] for e in evidence)


def test_letters_are_balanced_at_export_and_person_numbers_stay_on_the_video(built):
    """Two ASD questions of the duo clip whose stored answers share a letter (the twin names another target, so it
    is no duplicate): the export keeps one letter, moves the other answer with its text ("Person 2" names the
    clip's person number, not an option), exports the video as rendered, records stored and exported
    letters, and explain shows both orders. A rerun gives the same."""
    from hvbench_assets.core.benchmark.explain import format_explanation
    from hvbench_assets.core.media.paths import resolve

    wh, asd = built["wh"], built["asd"]
    twin = {**asd, "question_id": "qasdtwin00000001", "target_track_ids": [99]}
    wh.replace(QUESTIONS, {"video_id": "duo", "task": "Active_Speaker_Detection"}, [asd, twin])
    record_decision(wh, twin, "rev1", "accept", blind_choice=twin["answer"])
    try:
        result = run_bench(built["resources"], "letters")
        assert result.success
        folder = built["root"] / "data" / "benchmarks" / "letters"
        manifest = json.loads((folder / "manifest.json").read_text())
        counts = manifest["letters"]["per_task"]["Active_Speaker_Detection"]
        assert sorted(counts.values()) == [1, 1] and asd["answer"] in counts  # two letters, one each
        items = {i["question_id"]: i for i in manifest["items"] if i["task"] == "Active_Speaker_Detection"}
        moved = next(i for i in items.values() if i["answer"] != i["stored_answer"])
        kept = next(i for i in items.values() if i is not moved)
        assert kept["answer"] == kept["stored_answer"] == asd["answer"] and moved["stored_answer"] == asd["answer"]
        jsonl = (folder / "Active_Speaker_Detection.jsonl").read_text().splitlines()
        lines = {x["Question_id"]: x for x in map(json.loads, jsonl)}
        bench = {i.question_id: i for i in load_benchmark(folder, name="letters").items}
        item = bench[moved["question_id"]]
        assert lines[moved["question_id"]]["Answer"] == moved["answer"] == item.answer
        assert item.option_text(item.answer) == asd["answer_text"]  # the person keeps the clip's number
        stored_video = resolve(asd["video_path"])
        assert item.video_path.is_file() and item.video_path.read_bytes() == stored_video.read_bytes()
        assert bench[kept["question_id"]].video_path.read_bytes() == stored_video.read_bytes()
        rows = {r["question_id"]: r for r in wh.rows(EXPORT_ITEMS, benchmark="letters")}
        assert rows[moved["question_id"]]["letter_order"] == moved["letter_order"]
        assert moved["letter_order"] != sorted(moved["letter_order"])
        text = format_explanation(explain_question(wh, moved["question_id"]))
        assert f"letters: stored answer {asd['answer']}, exported answer {moved['answer']}" in text
        assert "exported order A<-" in text
        again = run_bench(built["resources"], "letters")
        assert json.loads((folder / "manifest.json").read_text())["letters"] == manifest["letters"]
        versions = [r.asset_materializations_for_node("benchmark_export")[0].tags["dagster/data_version"]
                    for r in (result, again)]
        assert versions[0] == versions[1]
    finally:
        wh.replace(QUESTIONS, {"video_id": "duo", "task": "Active_Speaker_Detection"}, [asd])


def test_a_blind_answered_synthesis_question_is_repaired_exported_and_explained(built):
    """An H2T question whose truth is its longest option: a blind model picking the longest option answers it;
    the writer (the describer) gets the blind picks, edits the wrong options, the re-test keeps it, the export
    carries the edited options, and explain and leakage.md show the round."""
    from hvbench_assets.core.benchmark.explain import format_explanation
    from hvbench_assets.core.benchmark.tables import LEAKAGE_REPAIRS

    wh, asd, server = built["wh"], built["asd"], built["server"]
    truth = "The person is a tall man in a long red coat standing beside the open door"
    edited = ["The person is a short woman in a long blue coat standing beside the closed window",
              "The person is a tall man in a short green coat sitting beside the open window now",
              "The person is a young boy in a long red scarf running beside the open gate there"]
    h2t = {**asd, "question_id": "qh2trepair000001", "task": "Human2Text", "abbrev": "H2T", "answer": "A",
           "question": "Describe the person marked by the red box.", "answer_text": truth,
           "marking": {"kind": "red_box", "track_ids": asd["target_track_ids"]}, "rule_params": {},
           "options": [{"letter": "A", "text": truth, "origin": "truth"},
                       {"letter": "B", "text": "The person is a child", "origin": "perturbation"},
                       {"letter": "C", "text": "The person is a cook", "origin": "perturbation"},
                       {"letter": "D", "text": "The person is old", "origin": "perturbation"}]}

    def respond(req):
        if req.model == "writer":
            return FakeReply(text=json.dumps({"distractors": edited}))
        options = re.findall(r"^Option ([A-Z]): (.+)$", req.prompt, flags=re.MULTILINE)
        return FakeReply(text=max(options, key=lambda o: len(o[1]))[0])

    models = built["root"] / "models_repair.toml"
    models.write_text(f'describer = "writer"\n[models.longest]\nmodel_id = "longest"\nbase_url = "{server.base_url}"\n'
                      f'[models.writer]\nmodel_id = "writer"\nbase_url = "{server.base_url}"\n')
    resources = {**built["resources"], "mllm": MllmResource(models_file=str(models), max_attempts=1, backoff_s=0.01),
                 "benchmark": BenchmarkResource(blind_models="longest", repair_rounds=2)}
    wh.replace(QUESTIONS, {"video_id": "duo", "task": "Human2Text"}, [h2t])
    # the synthesis chain's own last step: the repair rounds go after it
    wh.replace(SYNTHESIS_STEPS, {"video_id": "duo", "task": "Human2Text"}, step_rows(
        [{"step": "check", "attempt": 1, "status": "ok", "payload": {"ok": True}, "model": None, "weight": None,
          "call_id": None, "cached": None}], "duo", "Human2Text", "H2T", h2t["question_id"], "synth-test"))
    record_decision(wh, h2t, "rev1", "accept", blind_choice="A")
    old_responder = server.responder
    server.responder = respond
    try:
        result = run_bench(resources, "repaired")
        assert result.success
        v = next(v for v in wh.rows(LEAKAGE_VERDICTS, benchmark="repaired") if v["question_id"] == h2t["question_id"])
        assert (v["removed"], v["repair_round"], v["n_correct"]) == (False, 1, 0)
        assert v["reason"].startswith("repaired in round 1")
        steps = [(r["round"], r["step"], r["status"]) for r in wh.rows(LEAKAGE_REPAIRS, benchmark="repaired")
                 if r["question_id"] == h2t["question_id"]]
        assert sorted(steps) == [(1, "blind", "kept"), (1, "check", "ok"), (1, "perturbation", "ok")]
        writer_prompt = next(r.prompt for r in server.requests if r.model == "writer")
        assert "picked the correct answer in 4 of 4 tries" in writer_prompt
        meta = result.asset_materializations_for_node("blind_leakage")[0].metadata
        assert meta["repaired"].value == 1 and "| Human2Text | 1 | 1 | 0 | 1 |" in meta["per_task"].value
        folder = built["root"] / "data" / "benchmarks" / "repaired"
        line = json.loads((folder / "Human2Text.jsonl").read_text())
        assert all(text in line["choices"] for text in [truth, *edited]) and "The person is a child" not in line["choices"]
        # every round is in synthesis_steps after the chain: first blind test, the writer's edit, checks, re-test
        chain = wh.rows(SYNTHESIS_STEPS, order_by="seq", question_id=h2t["question_id"])
        assert [(r["seq"], r["step"], r["status"]) for r in chain] == [
            (0, "check", "ok"), (1, "blind", "removed"), (2, "repair", "ok"), (3, "repair_check", "ok"),
            (4, "blind", "kept")]
        first, edit, _, retest = chain[1:]
        assert first["payload"]["round"] == 0 and first["payload"]["picks"][truth] == 4  # what the blind model chose
        assert (first["payload"]["n_correct"], first["payload"]["models"]) == (4, ["longest"])
        assert edit["model"] == "writer" and edit["call_id"] and edit["payload"]["benchmark"] == "repaired"
        assert edit["payload"]["before"] == ["The person is a child", "The person is a cook", "The person is old"]
        assert edit["payload"]["after"] == edited and "picked the correct answer in 4 of 4" in edit["payload"]["feedback"]
        assert retest["payload"]["round"] == 1 and retest["payload"]["n_correct"] == 0
        assert retest["payload"]["options"] == [truth, *edited] and sum(retest["payload"]["picks"].values()) == 4
        assert {r["code_version"] for r in chain[1:]} == {REPAIR_CODE_VERSION}
        text = format_explanation(explain_question(wh, h2t["question_id"]))
        assert "1. blind (repaired, round 0) [removed]: 4/4 right without video" in text
        assert "2. repair (repaired, round 1): writer call" in text and "-> [\"The person is a short woman" in text
        assert "4. blind (repaired, round 1) [kept]: 0/4 right without video" in text
        assert "repair round 1 perturbation" not in text  # leakage_repairs rows are not shown twice
        # a rerun replaces this benchmark's rounds rather than adding to them
        assert run_bench(resources, "repaired").success
        assert len(wh.rows(SYNTHESIS_STEPS, question_id=h2t["question_id"])) == 5
        report = (built["root"] / "data" / "reports" / "repaired" / "leakage.md").read_text()
        assert "## Repaired" in report and "| qh2trepair000001 | Human2Text | 1 |" in report
    finally:
        server.responder = old_responder
        wh.replace(QUESTIONS, {"video_id": "duo", "task": "Human2Text"}, [])
        wh.replace(SYNTHESIS_STEPS, {"video_id": "duo", "task": "Human2Text"}, [])


def test_benchmark_checks_fail_on_unbalanced_letters_heavy_leakage_and_missing_files(tmp_path):
    from hvbench_assets.defs.benchmark.assets import export_files_check, leakage_share_check, letter_balance_check

    items = [{"question_id": f"q{i}", "task": "T", "answer": "A", "video": f"v{i}.mp4"} for i in range(4)]
    assert not letter_balance_check(items, {f"q{i}": 4 for i in range(4)}).passed  # 4 x A, fair share 1 each
    balanced = [{**i, "answer": "ABCD"[k]} for k, i in enumerate(items)]
    assert letter_balance_check(balanced, {f"q{i}": 4 for i in range(4)}).passed
    assert not leakage_share_check(4, 3).passed and leakage_share_check(4, 2).passed
    (tmp_path / "v0.mp4").write_bytes(b"x")
    bad = export_files_check(tmp_path, items)
    assert not bad.passed and "0 task files" in bad.metadata["problems"].value and "3 video(s) missing" in bad.metadata["problems"].value


def test_demo_summary_before_and_after_models_answer_every_arm(built):
    """What the demo prints about an export (core/evaluation/summary.py): leakage and text bias per task and how
    to configure a model; then, after eval_responses with HVBENCH_EVAL_ARMS=all for a model with and one without
    audio input (a loopback server answers from what each request carries), accuracy per task and arm, the item
    verdicts, the flagged audio-visual task and why one model has no audio arm."""
    from hvbench_assets.core.evaluation.summary import NO_MODEL, benchmark_summary
    from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions, eval_models_partitions

    wh, server, root = built["wh"], built["server"], built["root"]
    old_responder = server.responder
    server.responder = blind_text_model
    try:
        assert run_bench(built["resources"], "demo").success
        folder = root / "data" / "benchmarks" / "demo"
        before = "\n".join(benchmark_summary(wh, "demo", folder))
        assert "leakage (blind models) per task:" in before
        assert re.search(r"ER +1 +1 +1 +0", before) and re.search(r"ASD +1 +1 +0 +0", before)
        assert "text bias (no model" in before and "0 of 0 scored task(s) predictable from text" in before
        assert "not scored: 1 item(s) on 1 clip(s) (needs 20 items" in before  # too few to learn from, and said so
        assert before.endswith(NO_MODEL)

        items = {i.question: i for i in load_benchmark(folder, name="demo").items}

        def from_inputs(req):  # "sees" answers from the pictures; "hears" from the sound, and ASD also from pictures
            item = items[re.search(r"Question: (.*)", req.prompt).group(1)]
            right = bool(req.audio) or (item.task == "Active_Speaker_Detection" and bool(req.images)) \
                if req.model == "hears" else bool(req.images)
            return FakeReply(text=item.answer if right else next(x for x in item.letters if x != item.answer))

        server.responder = from_inputs
        models = root / "models_arms.toml"
        models.write_text(f'[models.sees]\nmodel_id = "sees"\nbase_url = "{server.base_url}"\n'
                          f'[models.hears]\nmodel_id = "hears"\nbase_url = "{server.base_url}"\naccepts_audio = true\n')
        resources = {"settings": built["resources"]["settings"], "warehouse": built["resources"]["warehouse"],
                     "mllm": MllmResource(models_file=str(models), max_attempts=1, backoff_s=0.01),
                     "evaluation": EvaluationResource(n_frames=2, arms="all")}
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(eval_benchmarks_partitions.name, ["demo"])
        instance.add_dynamic_partitions(eval_models_partitions.name, ["sees", "hears"])
        logs = []
        for model in ("sees", "hears"):  # new names: no reply cached by the earlier tests
            key = dg.MultiPartitionKey({"benchmark": "demo", "model": model})
            result = dg.materialize([eval_responses], partition_key=key, resources=resources, instance=instance)
            assert result.success
            logs += [e.user_message for e in instance.all_logs(result.run_id)]
        # the audio arm of the model without audio input is skipped with a note; its other arms ran
        assert any("arm 'audio' skipped for sees: its registry entry does not accept audio" in m for m in logs)
        arms = {(r["model"], r["arm"]) for r in wh.rows(EVAL_RESPONSES, benchmark="demo")}
        assert arms == {("sees", a) for a in ("full", "frames", "text")} | {("hears", a) for a in
                                                                            ("full", "frames", "audio", "text")}
        after = "\n".join(benchmark_summary(wh, "demo", folder))
        assert "accuracy (%) per task and arm:" in after
        assert re.search(r"sees +full \(no audio\) +frames \(model takes no audio\) +100\.0 +100\.0 +100\.0", after)
        assert re.search(r"hears +frames +frames only +100\.0 +0\.0 +50\.0", after)
        assert re.search(r"hears +audio +audio only +100\.0 +100\.0 +100\.0", after)
        verdicts = after.split("item verdicts per task")[1]
        assert re.search(r"ASD +1 +0 +1 +0 +0 +0 +0 +1/1", verdicts)  # video or audio; frames-only by every model
        assert re.search(r"AVAD +1 +0 +0 +0 +1 +0 +0 +0/1", verdicts)  # needs audio
        assert "ASD: 1/1 audio-visual items answered frames-only by every model" in after
        assert "audio arm not asked of sees: its registry entry takes no audio (HVBENCH_MLLM_SEES_ACCEPTS_AUDIO" in after
        assert NO_MODEL not in after and "text bias (no model" in after
    finally:
        server.responder = old_responder


def test_an_unknown_arm_in_the_settings_fails_the_run_naming_the_setting(built):
    from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions, eval_models_partitions

    resources = {**{k: built["resources"][k] for k in ("settings", "warehouse", "mllm")},
                 "evaluation": EvaluationResource(arms="full,video")}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(eval_benchmarks_partitions.name, ["ours"])
    instance.add_dynamic_partitions(eval_models_partitions.name, ["blind"])
    before = len(built["server"].requests)
    result = dg.materialize([eval_responses], partition_key=dg.MultiPartitionKey({"benchmark": "ours", "model": "blind"}),
                            resources=resources, instance=instance, raise_on_error=False)
    assert not result.success and len(built["server"].requests) == before
    failure = next(e for e in result.all_events if e.is_step_failure).event_specific_data.error
    assert "HVBENCH_EVAL_ARMS='full,video': unknown arm(s) video" in (failure.cause or failure).message
