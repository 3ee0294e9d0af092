"""Modality arms end to end: `hvbench eval --arms` against a real OpenAI-compatible HTTP server, resume,
the audio arm skipped for a model without audio input, and the report's per-item verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hvbench_assets.cli import main
from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.evaluation import EVAL_RESPONSES, EvalConfig, MllmAnswerer, evaluate, run_id_for
from hvbench_assets.core.evaluation.arms import ArmUnavailable, parse_arms
from hvbench_assets.core.evaluation.tables import EVAL_ITEM_ARMS
from hvbench_assets.core.scoring.arms import item_verdict
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.bench_factory import ITEMS_PER_TASK, SPEC, item_of, options_in, right_letter
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets_tests.core.evaluation.conftest import make_client

N_ITEMS = len(SPEC) * ITEMS_PER_TASK


def modality_responder(items):
    """Right or wrong from what the request carries: ER needs pictures, HC is guessable from the text,
    AVSM needs pictures and sound together, ASD needs sound (item 0 also shows in the pictures);
    the other tasks are never answered."""
    def respond(req):
        p = req.prompt
        item = item_of(p, items)
        pictures, sound = bool(req.images), bool(req.audio)
        ok = {"Emotion_Recognition": pictures, "Human_Count": True,
              "Audio_Visual_Speaker_Matching": pictures and sound,
              "Active_Speaker_Detection": sound or (pictures and item.qid.endswith("_0"))}.get(item.task, False)
        right = right_letter(p, items)
        return right if ok else next(letter for letter, _ in options_in(p) if letter != right)
    return respond


def models_file(path: Path, server: FakeOpenAIServer) -> Path:
    path.write_text(f'[models.vl]\nmodel_id = "vl"\nbase_url = "{server.base_url}"\n\n'
                    f'[models.av]\nmodel_id = "av"\nbase_url = "{server.base_url}"\naccepts_audio = true\n')
    return path


def test_parse_arms():
    assert parse_arms("full, frames,text") == ("full", "frames", "text")
    assert parse_arms("all") == ("full", "frames", "audio", "text") and parse_arms("") == ("full",)
    with pytest.raises(ValueError, match="unknown arm.*video"):
        parse_arms("full,video")


def test_verdict_rules():
    assert item_verdict({"text": True, "frames": True}) == "answerable from text"
    assert item_verdict({"text": False, "frames": True, "audio": False, "full": True}) == "needs video"
    assert item_verdict({"frames": False, "audio": True, "full": True}) == "needs audio"
    assert item_verdict({"frames": False, "audio": False, "full": True}) == "needs both"
    assert item_verdict({"frames": True, "audio": True}) == "video or audio"
    assert item_verdict({"frames": False, "full": False}) == "not answered"


def test_arms_in_one_command_resume_skip_and_report(tmp_path, capsys, monkeypatch):
    from hvbench_assets.testkit.bench_factory import make_benchmark

    root = tmp_path / "armbench"
    items = make_benchmark(root)
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "data"))
    wh = tmp_path / "wh.duckdb"
    argv = ["eval", "--benchmark", str(root), "--model", "vl", "--model", "av", "--frames", "2",
            "--arms", "full,frames,audio,text", "--warehouse", str(wh), "--no-progress"]
    with FakeOpenAIServer(responder=modality_responder(items)) as server:
        argv += ["--models-file", str(models_file(tmp_path / "models.toml", server))]
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "arm 'audio' skipped for vl: its registry entry does not accept audio" in err
        # vl: full and frames are the same request (answered once, then from the call cache), text;
        # av: four different requests per item
        assert server.request_count == 6 * N_ITEMS
        by_kind = {(bool(r.images), bool(r.audio)) for r in server.requests}
        assert by_kind == {(True, True), (True, False), (False, True), (False, False)}
        assert all("cannot see" in r.prompt for r in server.requests if not r.images)
        assert main(argv) == 0  # every arm resumes: nothing asked again
        assert server.request_count == 6 * N_ITEMS
    rows = Warehouse(wh).rows(EVAL_RESPONSES)
    assert len(rows) == 7 * N_ITEMS and len({r["run_id"] for r in rows}) == 7
    audio_rows = [r for r in rows if r["arm"] == "audio"]
    assert len(audio_rows) == N_ITEMS and all(r["audio_sent"] and r["frames_sent"] == 0 for r in audio_rows)
    assert all(r["frames_sent"] == 0 and not r["audio_sent"] for r in rows if r["arm"] == "text")

    capsys.readouterr()
    assert main(["report", "--benchmark", str(root), "--warehouse", str(wh)]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# Evaluation report") and "2 run(s)" in md  # the leaderboard: full arms only
    assert "## Modality arms" in md and "| vl | full (no audio) | frames (model takes no audio) |" in md
    assert "| av | audio | audio only |" in md
    verdicts = {r["question_id"]: r["verdict"] for r in Warehouse(wh).rows(EVAL_ITEM_ARMS)}
    assert len(verdicts) == N_ITEMS
    for it in items:
        expected = {"Emotion_Recognition": "needs video", "Human_Count": "answerable from text",
                    "Audio_Visual_Speaker_Matching": "needs both"}.get(it.task, "not answered")
        if it.task == "Active_Speaker_Detection":
            expected = "video or audio" if it.qid.endswith("_0") else "needs audio"
        assert verdicts[it.qid] == expected, it.qid
    assert "ASD: 1/3 audio-visual items answered frames-only by every model (Active_Speaker_Detection_0)" in md
    assert "| ER | 3 | 0 | 0 | 3 | 0 | 0 | 0 | - |" in md
    assert (tmp_path / "data" / "reports" / "armbench" / "item_arms.csv").read_text().count("\n") == N_ITEMS + 1


def test_audio_arm_is_refused_before_any_request_for_a_model_without_audio(toy_bench, fake_server, warehouse):
    bench = load_benchmark(toy_bench[0])
    with pytest.raises(ArmUnavailable, match="does not accept audio"):
        evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse,
                 EvalConfig(model="fake_vl", arm="audio"), progress=False)
    assert fake_server.request_count == 0
    # the full arm keeps the run id runs had before arms existed
    assert run_id_for("b", EvalConfig(model="m")) != run_id_for("b", EvalConfig(model="m", arm="frames"))
    assert "arm" not in EvalConfig(model="m").answer_settings()


def test_dagster_settings_give_one_run_per_seed_and_arm():
    from hvbench_assets.defs.resources import EvaluationResource

    configs = EvaluationResource(arms="full,audio,text", repeats=2).configs_for("m")
    assert [(c.arm, c.seed) for c in configs] == [("full", 0), ("audio", 0), ("text", 0),
                                                  ("full", 1), ("audio", 1), ("text", 1)]
    assert len({run_id_for("b", c) for c in configs}) == 6


def test_an_unknown_arm_stops_the_command_with_one_message(tmp_path, capsys):
    from hvbench_assets.testkit.bench_factory import make_benchmark

    root = tmp_path / "armbench"
    make_benchmark(root)
    with FakeOpenAIServer() as server:
        argv = ["eval", "--benchmark", str(root), "--model", "vl", "--arms", "full,video", "--warehouse",
                str(tmp_path / "wh.duckdb"), "--no-progress", "--models-file", str(models_file(tmp_path / "m.toml", server))]
        assert main(argv) == 2
        assert server.request_count == 0
    err = capsys.readouterr().err
    assert "error: --arms: unknown arm(s) video; choose from full, frames, audio, text (or 'all')" in err
    assert "Traceback" not in err
