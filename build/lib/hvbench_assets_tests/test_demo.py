"""The main command (`hvbench demo`) with every documented path variable set: it runs, and nothing
lands inside the repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hvbench_assets.core.settings import PROJECT_ROOT
from hvbench_assets_tests.media_factory import moving_square_video

PATH_VARIABLES = ("HVBENCH_DATA_DIR", "HVBENCH_INBOX_DIR", "HVBENCH_WAREHOUSE", "DAGSTER_HOME")
_NOT_OUTPUT = {".git", ".venv", "__pycache__", ".pytest_cache"}


def _repo_files() -> dict[str, float]:
    """Untracked files of the repository (outputs would be untracked) with their mtimes; source edits
    by people working in the same tree (tracked files, .py files) are not outputs of the demo."""
    tracked = set(subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                                 check=True).stdout.splitlines())
    out = {}
    for root, dirs, files in os.walk(PROJECT_ROOT):
        dirs[:] = [d for d in dirs if d not in _NOT_OUTPUT and not d.endswith(".egg-info")]
        for name in files:
            rel = (Path(root) / name).relative_to(PROJECT_ROOT).as_posix()
            if rel not in tracked and not name.endswith(".py"):
                out[rel] = (Path(root) / name).stat().st_mtime
    return out


@pytest.fixture
def outside_paths(tmp_path, monkeypatch) -> dict[str, Path]:
    paths = {
        "HVBENCH_DATA_DIR": tmp_path / "data",
        "HVBENCH_INBOX_DIR": tmp_path / "drop here",
        "HVBENCH_WAREHOUSE": tmp_path / "wh" / "bench.duckdb",
        "DAGSTER_HOME": tmp_path / "home",
    }
    paths["DAGSTER_HOME"].mkdir()
    (paths["DAGSTER_HOME"] / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    for name, p in paths.items():
        monkeypatch.setenv(name, str(p))
    return paths


@pytest.mark.slow
def test_demo_with_every_path_variable_writes_only_there(outside_paths, tmp_path, capsys):
    from hvbench_assets.core.warehouse import Warehouse
    from hvbench_assets.demo import run

    # `hvbench demo --videos DIR` with one short moving video: one raw run and one per-clip label run
    # (the generated samples take the same path twice over)
    own = tmp_path / "my videos"
    own.mkdir()
    moving_square_video(own / "walk.mp4", seconds=2.0)
    before = _repo_files()
    assert run(own) == 0
    printed = capsys.readouterr().out
    written = {k: v for k, v in _repo_files().items() if before.get(k) != v}
    assert not written, f"the demo wrote inside the repository: {sorted(written)[:20]}"
    # every variable was honoured
    inbox = outside_paths["HVBENCH_INBOX_DIR"]
    assert any(p.suffix == ".mp4" for p in inbox.iterdir()), "samples were not dropped into HVBENCH_INBOX_DIR"
    assert (outside_paths["HVBENCH_DATA_DIR"] / "clips").is_dir()
    assert (outside_paths["DAGSTER_HOME"] / "storage").is_dir() or (outside_paths["DAGSTER_HOME"] / "history").is_dir()
    wh = Warehouse(outside_paths["HVBENCH_WAREHOUSE"])
    assert wh.query("SELECT count(*) AS n FROM clips WHERE kept")[0]["n"] >= 1
    assert str(outside_paths["HVBENCH_WAREHOUSE"]) in printed
    assert not (outside_paths["HVBENCH_DATA_DIR"] / "hvbench.duckdb").exists()


def test_demo_says_what_ran_without_what(tmp_path, monkeypatch):
    """Without espeak-ng on PATH, without a describer and with an `unavailable` label, the demo's
    closing lines name each gap and what it changed."""
    from hvbench_assets.core.vision import DEMOGRAPHICS
    from hvbench_assets.core.warehouse import Warehouse
    from hvbench_assets.defs.mllm_resources import MllmResource
    from hvbench_assets.demo import ran_without

    wh = Warehouse(tmp_path / "wh.duckdb")
    wh.replace(DEMOGRAPHICS, {"video_id": "a__000"},
               [{"track_id": 0, "status": "unavailable", "reason": "no packaged age model"}],
               provenance={"backend": "offline", "model": "none", "code_version": "t"})
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    monkeypatch.delenv("HVBENCH_DESCRIBER_MODEL", raising=False)
    gaps = ran_without(wh, MllmResource(), generated=True)
    assert any(g.startswith("no espeak-ng: the sample has no speech") for g in gaps), gaps
    assert any(g.startswith("no MLLM describer") and "HVBENCH_DESCRIBER_MODEL" in g for g in gaps), gaps
    assert "demographics: 1 row(s) unavailable, no packaged age model" in gaps
    # the user's own videos: nothing about the generated sample
    assert not any("espeak-ng" in g for g in ran_without(wh, MllmResource(), generated=False))
