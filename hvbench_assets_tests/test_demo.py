"""The main command (`hvbench demo`) with every documented path variable set: it runs, and nothing
lands inside the repository."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

import pytest

from hvbench_assets.core.settings import PROJECT_ROOT
from hvbench_assets.testkit.media_factory import moving_square_video

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


QUEUED_INSTANCE = """telemetry:
  enabled: false
run_coordinator:   # as in dagster_home/: runs a sensor requests wait in the queue (no queue daemon runs here)
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
"""


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    """`hvbench demo --videos DIR` with one short moving video (one raw run and one per-clip label run; the
    generated samples take the same path twice over), every documented path variable pointing outside the
    repository. The variables stay set for the module's tests."""
    from hvbench_assets.demo.main import run

    tmp = tmp_path_factory.mktemp("demo")
    paths = {
        "HVBENCH_DATA_DIR": tmp / "data",
        "HVBENCH_INBOX_DIR": tmp / "drop here",
        "HVBENCH_WAREHOUSE": tmp / "wh" / "bench.duckdb",
        "DAGSTER_HOME": tmp / "home",
    }
    paths["DAGSTER_HOME"].mkdir()
    (paths["DAGSTER_HOME"] / "dagster.yaml").write_text(QUEUED_INSTANCE)
    own = tmp / "my videos"
    own.mkdir()
    moving_square_video(own / "walk.mp4", seconds=2.0)
    with pytest.MonkeyPatch.context() as mp:
        for name, p in paths.items():
            mp.setenv(name, str(p))
        before = _repo_files()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = run(own)
        written = {k: v for k, v in _repo_files().items() if before.get(k) != v}
        yield {"paths": paths, "code": code, "printed": printed.getvalue(), "written": written}


@pytest.mark.slow
def test_demo_with_every_path_variable_writes_only_there(demo_home):
    from hvbench_assets.core.warehouse import Warehouse

    outside_paths, printed = demo_home["paths"], demo_home["printed"]
    assert demo_home["code"] == 0, printed
    written = demo_home["written"]
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
    assert "inbox_sensor requested 1 raw_video_job run(s)" in printed
    assert "clip_sensor requested 1 per-clip run(s)" in printed
    # no answering model here: the summary has leakage and text bias, and says how to configure a model
    from hvbench_assets.core.evaluation.summary import NO_MODEL

    summary = printed.split("== evaluation summary ==\n")[1]
    assert summary.startswith("leakage (blind models): not run") and "\ntext bias" in summary and NO_MODEL in summary


@pytest.mark.slow
def test_the_sensor_daemon_after_the_demo_requests_no_run(demo_home):
    """`dagster dev` on the instance the demo built: the daemon's first evaluation of every sensor requests
    nothing, because the demo stored each tick and cursor as the daemon does and tagged its runs the same way."""
    import dagster as dg

    from hvbench_assets_tests.sensor_daemon import sensor_daemon

    assert demo_home["code"] == 0
    with dg.DagsterInstance.get() as instance, sensor_daemon(instance) as daemon:
        by_sensor = {}
        for r in instance.get_runs():
            by_sensor.setdefault(r.tags.get("dagster/sensor_name"), []).append(r.tags.get("dagster/run_key"))
        assert len(by_sensor["inbox_sensor"]) == 1 and len(by_sensor["clip_sensor"]) == 1
        assert len(by_sensor["review_sensor"]) == 1 and all(by_sensor["review_sensor"])
        for name in ("inbox_sensor", "clip_sensor", "review_sensor"):
            cursor = daemon.state(name).instigator_data.cursor
            assert cursor and len(cursor) == 16, (name, cursor)  # a token: the state is kept out of sight
            assert daemon.ticks(name)  # the demo's ticks show on the sensor page
        before = daemon.run_ids()
        daemon.iterate()
        assert daemon.run_ids() == before
        for name in ("inbox_sensor", "clip_sensor", "review_sensor", "annotation_sensor"):
            newest = daemon.ticks(name)[0]
            assert newest.timestamp == daemon.now.timestamp(), name  # evaluated by this iteration
            assert newest.status.value == "SKIPPED", (name, newest.status, newest.error)


@pytest.mark.slow
def test_a_reset_cursor_reruns_nothing_and_a_changed_file_still_runs(demo_home):
    import time

    import dagster as dg

    from hvbench_assets_tests.sensor_daemon import sensor_daemon

    assert demo_home["code"] == 0
    with dg.DagsterInstance.get() as instance, sensor_daemon(instance) as daemon:
        for name in ("inbox_sensor", "clip_sensor", "review_sensor"):
            daemon.reset_cursor(name)
        before = daemon.run_ids()
        daemon.iterate()
        daemon.iterate()  # the inbox sensor looks at a file twice before it counts as settled
        assert daemon.run_ids() == before, "a lost cursor ran finished work again"
        assert daemon.ticks("inbox_sensor")[0].status.value == "SKIPPED"
        # new content in the same file: its raw run, and once that has split it, the changed clip's run
        walk = demo_home["paths"]["HVBENCH_INBOX_DIR"] / "walk.mp4"
        moving_square_video(walk, seconds=2.5, color=(220, 60, 30))
        old = time.time() - 3600
        os.utime(walk, (old, old))
        daemon.iterate()
        daemon.iterate()
        new = [instance.get_run_by_id(i) for i in daemon.run_ids() - before]
        assert [(r.job_name, r.tags["dagster/partition"]) for r in new] == [("raw_video_job", "walk")]
        assert new[0].status == dg.DagsterRunStatus.QUEUED
        instance.launch_run(new[0].run_id, daemon.context.create_request_context())  # as the run queue does
        deadline = time.time() + 300
        while not instance.get_run_by_id(new[0].run_id).is_finished and time.time() < deadline:
            time.sleep(1)
        assert instance.get_run_by_id(new[0].run_id).status == dg.DagsterRunStatus.SUCCESS
        before = daemon.run_ids()
        daemon.iterate()
        new = [instance.get_run_by_id(i) for i in daemon.run_ids() - before]
        assert [(r.job_name, r.tags["dagster/partition"]) for r in new] == [("clip_offline_labels_job", "walk__000")]


def test_demo_says_what_ran_without_what(tmp_path, monkeypatch):
    """Without espeak-ng on PATH, without a describer and with an `unavailable` label, the demo's
    closing lines name each gap and what it changed."""
    from hvbench_assets.core.vision import DEMOGRAPHICS
    from hvbench_assets.core.warehouse import Warehouse
    from hvbench_assets.defs.resources import MllmResource
    from hvbench_assets.demo.main import ran_without

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
