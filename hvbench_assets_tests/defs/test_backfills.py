"""Backfills launched from the UI run several clips per run (runtime/batch.py `CLIP_BACKFILL_POLICY`): the backfill
daemon's own iteration turns a backfill of the clip assets into runs over key ranges, a corrupt clip fails alone on
its partition, and `HVBENCH_BACKFILL_CLIPS_PER_RUN` sets the clips per run (1: one run per clip)."""

from __future__ import annotations

import logging
import os
import shutil
import time

import dagster as dg
import pytest

from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.settings import PROJECT_ROOT
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, ERROR, STATUS, clip_backfill_policy
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets_tests.pipeline_runs import (ingest_inbox, latest_metadata, new_clips, talking_clip,
                                                use_data_root)
from hvbench_assets.testkit.ui_backfill import launch_backfill


def test_the_setting_chooses_clips_per_run():
    assert clip_backfill_policy(8) == dg.BackfillPolicy.multi_run(8)
    assert clip_backfill_policy(1) is None  # Dagster's default: one run per partition
    with pytest.raises(ValueError, match="HVBENCH_BACKFILL_CLIPS_PER_RUN=0"):
        clip_backfill_policy(0)
    assert CLIP_BACKFILL_POLICY == dg.BackfillPolicy.multi_run(8)  # the default (the setting unset here)


def test_every_per_clip_asset_shares_the_policy():
    """A backfill puts assets in one run only when their partitions and backfill policies agree."""
    from hvbench_assets.definitions import defs

    graph = defs().resolve_asset_graph()
    per_clip = [n for n in graph.asset_nodes if n.partitions_def == videos_partitions]
    assert len(per_clip) >= 30  # the probe, the labels and the task questions
    assert {n.key.to_user_string(): n.backfill_policy for n in per_clip} == {
        n.key.to_user_string(): CLIP_BACKFILL_POLICY for n in per_clip}


@pytest.mark.slow
def test_a_ui_backfill_runs_key_ranges_and_a_corrupt_clip_fails_alone(tmp_path, monkeypatch):
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._daemon.backfill import execute_backfill_iteration

    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home)  # the project's instance: runs are queued
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    monkeypatch.setenv("HVBENCH_BACKFILL_CLIPS_PER_RUN", "2")  # read by the code server the workspace starts
    for name in ("a_talk", "b_talk", "c_talk"):
        talking_clip(data / "inbox" / f"{name}.mp4", seconds=2.5)
    assets = ["video_probe", "audio_tags"]
    with dg.DagsterInstance.get() as instance:
        ingest_inbox(instance)
        clips = new_clips(instance)
        assert len(clips) == 3
        bad = clips[1]
        (row,) = Warehouse(data / "hvbench.duckdb").query("SELECT clip_path FROM clips WHERE video_id = ?", [bad])
        bad_path = resolve(row["clip_path"])
        bad_path.write_bytes(bad_path.read_bytes()[:2000])  # cut short after ingest

        target = WorkspaceFileTarget(paths=[str(PROJECT_ROOT / "workspace.yaml")])
        with create_test_daemon_workspace_context(target, instance) as context:
            # what the UI's "Materialize" over selected partitions sends (an asset backfill: no job selector)
            backfill_id = launch_backfill(context.create_request_context(), clips, assets)
            list(execute_backfill_iteration(context, logging.getLogger("backfill_daemon_test")))

            runs = sorted(instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id})),
                          key=lambda r: r.tags["dagster/asset_partition_range_start"])
            # two clips per run (the setting), every selected asset in the same run
            assert [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"])
                    for r in runs] == [(clips[0], clips[1]), (clips[2], clips[2])]
            assert all(r.asset_selection == {dg.AssetKey(a) for a in assets} for r in runs)
            assert all(r.status == dg.DagsterRunStatus.QUEUED for r in runs)
            assert not any("hvbench/source" in r.tags for r in runs)

            for r in runs:  # as the run queue does
                instance.launch_run(r.run_id, context.create_request_context())
            deadline = time.time() + 300
            while time.time() < deadline and not all(instance.get_run_by_id(r.run_id).is_finished for r in runs):
                time.sleep(0.5)
            assert [instance.get_run_by_id(r.run_id).status for r in runs] == [dg.DagsterRunStatus.SUCCESS] * 2

            for asset in assets:  # per partition: the good clip ok, the corrupt one failed and why
                assert latest_metadata(instance, asset, clips[0])[STATUS] == "ok", asset
                assert STATUS not in latest_metadata(instance, asset, clips[2])  # a one-clip run's events, as ever
                meta = latest_metadata(instance, asset, bad)
                assert meta[STATUS] == "failed" and bad in meta[ERROR], (asset, meta)
            assert bad_path.name in latest_metadata(instance, "video_probe", bad)[ERROR]
            rows = {r["video_id"]: r["status"] for r in Warehouse(data / "hvbench.duckdb").query(
                "SELECT video_id, status FROM video_probe")}
            assert rows == {clips[0]: "ok", bad: "failed", clips[2]: "ok"}

            # the range run's clips come from two files: it names no single source but both files, one tag each,
            # so each file's filter finds it (the one-clip run names its own)
            tags = instance.get_run_by_id(runs[0].run_id).tags
            assert "hvbench/source" not in tags
            assert tags["hvbench/file/a_talk"] == "a_talk.mp4" and tags["hvbench/file/b_talk"] == "b_talk.mp4"
            for name in ("a_talk", "b_talk"):
                assert runs[0].run_id in {r.run_id for r in instance.get_runs(dg.RunsFilter(
                    tags={"dagster/backfill": backfill_id, f"hvbench/file/{name}": f"{name}.mp4"}))}
            tags = instance.get_run_by_id(runs[1].run_id).tags
            assert tags["hvbench/source"] == "c_talk.mp4" and tags["hvbench/file/c_talk"] == "c_talk.mp4"
            list(execute_backfill_iteration(context, logging.getLogger("backfill_daemon_test")))
            assert instance.get_backfill(backfill_id).status.value.startswith("COMPLETED")


@pytest.mark.slow
def test_a_range_run_of_one_files_clips_names_that_file(tmp_path, monkeypatch, dagster_home):
    """A backfill's range run has no sensor tags; when all its clips come from one file, the run is tagged with it
    (as clip_sensor tags its batches), so the Runs page's `hvbench/source` filter finds it."""
    from hvbench_assets.runtime.batch import range_tags
    from hvbench_assets.demo.main import clip_offline_labels_job
    from hvbench_assets.testkit.media_factory import concat_videos, moving_square_video

    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    parts = [talking_clip(tmp_path / "talk.mp4", seconds=2.5), moving_square_video(tmp_path / "square.mp4", seconds=2.5)]
    inbox_file, _ = concat_videos(parts, data / "inbox" / "two shots.mp4")
    settled = time.time() - 3600  # complete: the inbox sensor need not wait for it
    os.utime(inbox_file, (settled, settled))
    with dg.DagsterInstance.get() as instance:
        ingest_inbox(instance)
        clips = new_clips(instance)
        assert len(clips) == 2
        result = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                asset_selection=[dg.AssetKey("video_probe")], tags=range_tags(clips[0], clips[1]))
        assert result.success
        assert instance.get_run_by_id(result.run_id).tags["hvbench/source"] == "two shots.mp4"
