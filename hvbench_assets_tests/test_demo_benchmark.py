"""The main command from a real video to an evaluated benchmark: with an answering model configured (the loopback
server at the endpoint's place) it filters leakage, exports, evaluates and writes the report. Without one it
stops after the export and says how to configure an endpoint."""

from __future__ import annotations

import json
import os
import re

import pytest

from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply
from hvbench_assets.testkit.speaker_composites import MAN, Scene, build_scene
from hvbench_assets_tests.conftest import shared_clip


@pytest.fixture
def new_user(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    for name, value in {"HVBENCH_DATA_DIR": tmp_path / "data", "DAGSTER_HOME": home}.items():
        monkeypatch.setenv(name, str(value))
    for name in [n for n in os.environ if n.startswith("HVBENCH_MLLM_") or n in ("HVBENCH_WAREHOUSE",
                                                                                 "HVBENCH_INBOX_DIR",
                                                                                 "HVBENCH_DESCRIBER_MODEL")]:
        monkeypatch.delenv(name)
    videos = tmp_path / "videos"
    videos.mkdir()
    # the real talking head twice in a row, sound and picture together: 10 s with a clear speaker (AVAD needs > 8 s)
    build_scene(Scene("man", (MAN,), ("man",)), shared_clip("man_talking_head.mp4").parent, videos / "talking_man.mp4",
                seconds=5.0, loops=2, height=480)
    return tmp_path, videos


@pytest.mark.slow
def test_main_command_exports_then_evaluates_once_a_model_is_configured(new_user, monkeypatch, capsys):
    from hvbench_assets.demo.main import run

    tmp_path, videos = new_user
    assert run(videos) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "data" / "benchmarks" / "hvbench"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["counts"]["Audio_Visual_Alignment_Detection"] == 1  # AVAD needs no review (ASD: one person)
    assert "speaks (longest positive run " in out and ", best score +" in out  # how far above its bar
    assert f"export: 1 question(s) in {folder}" in out and "No answering model is configured" in out
    assert "beside it, the same items as yes/no (2 in hvbench_yesno), open-ended (1 in hvbench_open)" in out
    assert "HVBENCH_MLLM_MYMODEL_BASE_URL" in out and not (tmp_path / "data" / "reports").exists()

    with FakeOpenAIServer() as server:
        server.responder = lambda req: FakeReply(text="A")
        monkeypatch.setenv("HVBENCH_MLLM_LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("HVBENCH_MLLM_LOOP_MODEL", "loop")
        monkeypatch.setenv("HVBENCH_MLLM_MODELS", "loop")
        assert run(videos) == 0
        out = capsys.readouterr().out
        blind = [r for r in server.requests if not r.images]
        seen = [r for r in server.requests if r.images]
        # 3 rotations of the AVAD question, then it is asked as multiple choice, as 2 yes/no statements and open
        assert len(blind) == 3 and len(seen) == 1 + 2 + 1
        assert "eval_responses/hvbench_yesno|loop: asked 2" in out and "eval_responses/hvbench_open|loop: asked 1" in out
        assert "leakage: 1 tested, 0 removed" in out and "# Evaluation report: hvbench" in out
        assert (tmp_path / "data" / "reports" / "hvbench" / "report.html").is_file()
        assert json.loads((folder / "manifest.json").read_text())["leakage"]["models"] == ["loop"]
        # evaluated through Dagster: both evaluation assets are materialized on the instance the UI reads
        assert "eval_responses/hvbench|loop: asked 1" in out
        import dagster as dg

        with dg.DagsterInstance.get() as instance:
            for key in ("eval_responses", "eval_report"):
                assert instance.get_latest_materialization_event(dg.AssetKey(key)) is not None
        # the summary that ends the demo: leakage per task, text bias, and (full arm only) how to get the arms
        summary = out.split("== evaluation summary ==", 1)[1]
        assert "leakage (blind models) per task:" in summary and "text bias" in summary
        assert "arms: only the full arm was run" in summary
        # the three formats side by side: "A" picks an option, but is no yes/no word and names no second
        assert "the 3 formats side by side (loop, full arm" in summary
        assert re.search(r"AVAD +(?:1/1 \(100 %\)|0/1 \(0 %\)) +0/2 \(0 %\) +0/1 \(0 %\)", summary), summary

        # every arm (what `hvbench demo` asks by default): the evaluation resumes, asking only the new arms
        monkeypatch.setenv("HVBENCH_EVAL_ARMS", "all")
        before = len(server.requests)
        assert run(videos) == 0
        summary = capsys.readouterr().out.split("== evaluation summary ==", 1)[1]
        assert len(server.requests) > before
        assert "accuracy (%) per task and arm:" in summary and "item verdicts per task" in summary
        assert "flagged audio-visual tasks" in summary and "AVAD" in summary
