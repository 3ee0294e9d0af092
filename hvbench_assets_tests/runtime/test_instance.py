"""The project's instance (dagster_home/dagster.yaml): Dagster's SQLite files, with the event log's connections
kept open per process. Runs, forked steps, other processes and Dagster's own storage class all see the same
events; removed files are created again; a process keeps a bounded number of files open. (A run whose steps the
executor forks on this instance: test_forked_steps.py.)"""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg
import pytest
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from hvbench_assets.core.settings import seed_dagster_home
from hvbench_assets.runtime.instance import OPEN_SHARDS, HvbenchInstance, PooledSqliteEventLogStorage

parts = dg.StaticPartitionsDefinition(["a", "b", "c"])


@dg.asset(partitions_def=parts, check_specs=[dg.AssetCheckSpec("rows_positive", asset="counted")])
def counted(context):
    yield dg.MaterializeResult(metadata={"rows": len(context.partition_key)})
    yield dg.AssetCheckResult(check_name="rows_positive", passed=True)


@dg.asset(partitions_def=parts, deps=[counted])
def downstream() -> None:
    return None


JOB = dg.Definitions(assets=[counted, downstream], jobs=[dg.define_asset_job("both", selection="*")]).resolve_job_def(
    "both")


@pytest.fixture
def instance(tmp_path, monkeypatch):
    home = tmp_path / "home"
    assert seed_dagster_home(home)  # the project's dagster.yaml
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as inst:
        yield inst


def _materializations(instance, key: str) -> int:
    return len(instance.fetch_materializations(dg.AssetKey(key), limit=100).records)


def test_project_instance_uses_the_pooled_event_log_on_dagsters_files(instance):
    assert isinstance(instance, HvbenchInstance)
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage)
    for key in parts.get_partition_keys():
        assert JOB.execute_in_process(instance=instance, partition_key=key).success
    assert _materializations(instance, "counted") == 3 and _materializations(instance, "downstream") == 3
    checks = instance.event_log_storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey("counted"), "rows_positive"), limit=10)
    assert len(checks) == 3
    # Dagster's own class reads the same files: nothing moved
    plain = SqliteEventLogStorage(storage._base_dir)
    run_ids = {r.run_id for r in instance.get_runs()}
    assert len(run_ids) == 3 and all(plain.get_logs_for_run(r) for r in run_ids)
    assert len(plain.fetch_materializations(dg.AssetKey("counted"), limit=10).records) == 3


def test_events_of_a_forked_child_and_another_process_are_seen(instance, tmp_path):
    storage = instance.event_log_storage
    instance.report_runless_asset_event(dg.AssetMaterialization("parent", partition="a"))  # the index stays open
    pid = os.fork()
    if pid == 0:  # the child stores through the same object, on its own connections
        try:
            instance.report_runless_asset_event(dg.AssetMaterialization("parent", partition="b"))
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    script = ("import dagster as dg\n"
              "with dg.DagsterInstance.get() as i:\n"
              "    i.report_runless_asset_event(dg.AssetMaterialization('parent', partition='c'))\n")
    subprocess.run([sys.executable, "-c", script], check=True, env={**os.environ})
    instance.report_runless_asset_event(dg.AssetMaterialization("parent", partition="a"))
    assert _materializations(instance, "parent") == 4
    assert os.getpid() == storage._pid and len(storage._inherited) == 0


def test_removed_files_are_created_again_and_open_files_are_bounded(instance):
    storage = instance.event_log_storage
    for key in parts.get_partition_keys():
        assert JOB.execute_in_process(instance=instance, partition_key=key).success
    run_id = instance.get_runs(limit=1)[0].run_id
    os.remove(storage.path_for_shard(run_id))  # someone deleted the run's file: the next write makes a new one
    storage.store_event(dg.EventLogEntry(error_info=None, level="INFO", user_message="after removal", run_id=run_id,
                                         timestamp=1.0))
    assert [e.user_message for e in storage.get_logs_for_run(run_id)] == ["after removal"]
    for i in range(OPEN_SHARDS + 4):
        storage.store_event(dg.EventLogEntry(error_info=None, level="INFO", user_message="x", run_id=f"r{i}",
                                             timestamp=1.0))
    assert len([s for s in storage._engines if s != "index"]) == OPEN_SHARDS
    assert storage.get_logs_for_run("r0")[0].user_message == "x"  # an evicted file opens again
    storage.wipe()
    assert list(storage._engines) == ["index"] and _materializations(instance, "counted") == 0
    assert JOB.execute_in_process(instance=instance, partition_key="a").success
    assert _materializations(instance, "counted") == 1


def test_explicit_storage_in_dagster_yaml_is_kept(tmp_path, monkeypatch):
    home = tmp_path / "home"
    assert seed_dagster_home(home)
    with open(home / "dagster.yaml", "a") as f:
        f.write(f"\nstorage:\n  sqlite:\n    base_dir: {tmp_path / 'elsewhere'}\n")
    with dg.DagsterInstance.from_config(str(home)) as inst:
        assert isinstance(inst, HvbenchInstance)
        assert type(inst.event_log_storage) is SqliteEventLogStorage


def test_the_daemon_looks_for_new_backfills_every_few_seconds(instance):
    """Dagster's backfill loop waits 30 s between looks: a new backfill's first run came 5.7-11.4 s after its launch.
    On the project's instance it looks every BACKFILL_LOOP_S (the daemon creates its instance before the loop)."""
    import logging
    import threading
    import time

    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import EmptyWorkspaceTarget
    from dagster._daemon.backfill import execute_backfill_iteration_loop
    from dagster._daemon.daemon import SpanMarker

    from hvbench_assets.runtime.instance import BACKFILL_LOOP_S

    assert isinstance(instance, HvbenchInstance)
    looks, t0 = 0, time.monotonic()
    with create_test_daemon_workspace_context(EmptyWorkspaceTarget(), instance) as context:
        for event in execute_backfill_iteration_loop(context, logging.getLogger("backfill_loop_test"),
                                                     threading.Event(), until=time.time() + BACKFILL_LOOP_S + 1):
            looks += event is SpanMarker.START_SPAN  # one per look
    assert looks == 2 and BACKFILL_LOOP_S <= time.monotonic() - t0 < 3 * BACKFILL_LOOP_S
