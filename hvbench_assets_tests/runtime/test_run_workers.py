"""Run workers started by a real code server (`dagster api grpc` on loopback): forked from the preloaded process by
default, spawned with HVBENCH_RUN_WORKERS=spawn; and the switch to spawn once the package's files change."""

from __future__ import annotations

import multiprocessing
import os
import time

import dagster as dg
import pytest

from hvbench_assets.runtime import run_workers
from hvbench_assets.testkit.code_server import code_server, launch, launch_probe, wait_for_status


@pytest.mark.slow
@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver here")
def test_run_workers_are_forked_from_the_preloaded_process_by_default(dagster_home):
    with code_server(dagster_home, None) as (server_pid, instance, context):
        first, second = launch_probe(instance, context), launch_probe(instance, context)
    for report in (first, second):
        # hvbench's definitions were imported before the job's module: the worker came from the fork server
        assert report["preloaded"] is True
        assert report["ppid"] != server_pid
    assert first["ppid"] == second["ppid"]  # one fork server for every run
    assert first["pid"] != second["pid"]


@pytest.mark.slow
@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver here")
def test_a_preloaded_worker_reports_its_failure_and_can_be_terminated(dagster_home):
    import dagster as dg

    with code_server(dagster_home, None) as (_, instance, context):
        failed = launch(instance, context, "run_worker_failure")
        run_id = launch(instance, context, "run_worker_waits", until=(dg.DagsterRunStatus.STARTED,))
        deadline = time.time() + 60
        while not any("waiting to be terminated" in (e.message or "") for e in instance.all_logs(run_id)):
            assert time.time() < deadline, "the waiting op never started"
            time.sleep(0.2)
        assert instance.run_launcher.terminate(run_id)
        status = wait_for_status(instance, run_id, (dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.FAILURE))
    assert instance.get_run_by_id(failed).status == dg.DagsterRunStatus.FAILURE
    errors = [e.dagster_event.step_failure_data.error.to_string() for e in instance.all_logs(failed)
              if e.dagster_event and e.dagster_event.is_step_failure]
    assert any("the probe failed on purpose" in m for m in errors)
    assert status == dg.DagsterRunStatus.CANCELED


@pytest.mark.slow
@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver here")
def test_the_code_server_dagster_dev_starts_forks_them_too(dagster_home):
    # `dagster code-server start` (what `dagster dev` runs): its child server creates the instance from its ref
    with code_server(dagster_home, None, proxy=True) as (_, instance, context):
        first, second = launch_probe(instance, context), launch_probe(instance, context)
    assert first["preloaded"] is second["preloaded"] is True
    assert first["ppid"] == second["ppid"]


@pytest.mark.slow
def test_spawn_keeps_dagsters_own_start(dagster_home):
    with code_server(dagster_home, "spawn") as (server_pid, instance, context):
        report = launch_probe(instance, context)
    assert report["preloaded"] is False
    assert report["ppid"] == server_pid


@pytest.mark.slow
def test_dagsters_own_instance_class_keeps_dagsters_own_start(dagster_home):
    # the switch is the instance class, not an import: hvbench's definitions load, nothing is patched
    with code_server(dagster_home, None, ours=False) as (server_pid, instance, context):
        assert type(instance) is dg.DagsterInstance
        report = launch_probe(instance, context)
    assert report["preloaded"] is False
    assert report["ppid"] == server_pid


def test_importing_the_definitions_patches_nothing():
    import subprocess
    import sys

    from hvbench_assets.runtime.dagster_private import CODE_SERVER_MODULE

    probe = (f"import {CODE_SERVER_MODULE} as s; before = s.DagsterApiServer.StartRun; "
             "import hvbench_assets.definitions as d; d.defs(); print(s.DagsterApiServer.StartRun is before)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("True")


def test_a_changed_package_is_spawned_from_then_on(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    method = run_workers.StartMethod(lambda: run_workers.source_stamp(tmp_path))
    assert method.context().get_start_method() == "forkserver"
    assert method.context().get_start_method() == "forkserver"
    os.utime(tmp_path / "a.py", ns=(time.time_ns(), time.time_ns() + 10**9))
    assert method.context().get_start_method() == "spawn"
    assert method.stale
    os.utime(tmp_path / "a.py", ns=(0, 0))  # even back as it was: the fork server's copy may be either
    assert method.context().get_start_method() == "spawn"


def test_an_added_module_changes_the_stamp(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    before = run_workers.source_stamp(tmp_path)
    (tmp_path / "b.py").write_text("y = 1\n")
    os.utime(tmp_path / "b.py", ns=(0, 0))  # older than a.py: only the count tells
    assert run_workers.source_stamp(tmp_path) != before


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="HVBENCH_RUN_WORKERS='fork'"):
        run_workers.install("fork")
    assert run_workers.install("spawn") is False
