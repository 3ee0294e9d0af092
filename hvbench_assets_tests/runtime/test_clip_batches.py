"""Several clips in one run (runtime/batch.py): a run over a `videos` key range with one corrupt clip writes the
good clips' rows, records a clear error for the bad one, and keeps status per partition (materialization
metadata and check evaluations)."""

from __future__ import annotations

import dagster as dg
import pytest

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.tasks.store import TASK_CANDIDATES
from hvbench_assets.core.vision.tables import HUMAN_TRACKS, PERSON_COUNT
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.runtime.batch import BATCH_TAG, ERROR, STATUS
from hvbench_assets.defs.ingest.sensors import clip_sensor
from hvbench_assets_tests.pipeline_runs import (_apply, _resources, ingest_inbox, latest_metadata, request_keys,
                                                talking_clip, use_data_root)

# the probe and its checks, L1 and its checks, L2, the verdicts and a task with its own check spec (HC)
ASSETS = ["video_probe", "human_tracks", "person_count", "human_verdicts", "human_counting"]


@pytest.mark.slow
def test_a_batch_with_a_corrupt_clip_writes_the_others_and_names_the_failure(tmp_path, monkeypatch, dagster_home):
    from hvbench_assets.demo.main import clip_offline_labels_job

    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    for name in ("a_talk", "b_talk", "c_talk"):
        talking_clip(data / "inbox" / f"{name}.mp4", seconds=2.5)
    wh = Warehouse(data / "hvbench.duckdb")
    with dg.DagsterInstance.get() as instance:
        assert sorted(ingest_inbox(instance)) == ["a_talk", "b_talk", "c_talk"]
        # the clip sensor asks for one run over the three short clips' key range
        (request,) = _apply(clip_sensor(dg.build_sensor_context(instance=instance, resources=_resources())), instance)
        assert request.partition_key is None and request.tags[BATCH_TAG] == "3"
        clips = request_keys(request, instance)
        assert len(clips) == 3 and instance.get_dynamic_partitions("videos") == clips
        bad = clips[1]
        (row,) = wh.query("SELECT clip_path FROM clips WHERE video_id = ?", [bad])
        bad_path = resolve(row["clip_path"])
        bad_path.write_bytes(bad_path.read_bytes()[:2000])  # cut short after ingest

        # L1 deletes the crops its old rows named only once its new rows are committed, though a batch step holds
        # its clips' writes (core/warehouse/grouped.py): a reader in another thread sees the new rows by then
        import threading

        import hvbench_assets.defs.labels.vision as vision_defs

        seen = tmp_path / "committed_before_removal"
        real_remove = vision_defs.remove_replaced

        def remove_replaced(parent, keep, still_running):
            rows: list = []
            reader = threading.Thread(target=lambda: rows.extend(
                Warehouse(data / "hvbench.duckdb").rows(HUMAN_TRACKS, video_id=parent.parent.name)))
            reader.start()
            reader.join()
            named = [resolve(r["face_clip_path"]) for r in rows if r["face_clip_path"]]
            with seen.open("a") as f:  # L1's split helper appends too
                f.write(f"{bool(named) and all(keep in p.parents for p in named)}\n")
            return real_remove(parent, keep, still_running)

        monkeypatch.setattr(vision_defs, "remove_replaced", remove_replaced)
        result = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                asset_selection=[dg.AssetKey(a) for a in ASSETS],
                                tags=request.tags)
        assert result.success  # one bad clip does not fail the batch's steps
        assert seen.read_text().split() == ["True", "True"]  # the two good clips

        for good in (clips[0], clips[2]):  # the good clips' rows, as a one-clip run writes them
            assert wh.rows(VIDEO_PROBE, video_id=good)[0]["status"] == "ok"
            assert len(wh.rows(HUMAN_TRACKS, video_id=good)) == 2
            assert wh.rows(PERSON_COUNT, video_id=good)[0]["person_count"] >= 1
            assert [r["abbrev"] for r in wh.rows(TASK_CANDIDATES, video_id=good)] == ["HC"]
            for asset in ASSETS:
                assert latest_metadata(instance, asset, good)[STATUS] == "ok", (asset, good)
            assert latest_metadata(instance, "human_tracks", good)["tracks"] == 2  # the clip's own metadata
        (probe,) = wh.rows(VIDEO_PROBE, video_id=bad)  # the probe's status row names the failure
        assert probe["status"] == "failed" and probe["reason"]
        assert not wh.rows(HUMAN_TRACKS, video_id=bad)
        for asset in ASSETS:  # per partition in the UI: the bad clip's events say failed, and why
            meta = latest_metadata(instance, asset, bad)
            assert meta[STATUS] == "failed", (asset, meta)
            assert bad in meta[ERROR], (asset, meta[ERROR])
        assert str(bad_path.name) in latest_metadata(instance, "video_probe", bad)[ERROR]

        # checks: one evaluation per clip and partition; the bad clip's checks fail
        evaluations = [e.dagster_event.event_specific_data for e in instance.all_logs(result.run_id)
                       if e.dagster_event and e.dagster_event.event_type_value == "ASSET_CHECK_EVALUATION"]
        by_check: dict[str, dict[str, bool]] = {}
        for ev in evaluations:
            by_check.setdefault(ev.check_name, {})[ev.partition] = ev.passed
        assert {"face_presence_ratio", "question_complete", "clip_duration_in_paper_range"} <= set(by_check)
        for name, per_clip in by_check.items():
            assert set(per_clip) == set(clips), name
        assert by_check["question_complete"][clips[0]] and not by_check["question_complete"][bad]
        assert not by_check["has_audio_stream"][bad] and by_check["has_audio_stream"][clips[0]]


def test_run_plans_follows_the_run_selection():
    """human_tracks writes body-crop clips only when its run also materializes appearance (run_plans)."""
    from hvbench_assets.runtime.batch import run_plans

    seen = []

    @dg.asset(name="appearance")
    def appearance_stand_in():
        return None

    @dg.asset
    def reader(context):
        seen.append(run_plans(context, "appearance"))

    job = dg.define_asset_job("both", selection=["appearance", "reader"])
    defs = dg.Definitions(assets=[appearance_stand_in, reader], jobs=[job])
    instance = dg.DagsterInstance.ephemeral()
    assert dg.materialize([appearance_stand_in, reader], instance=instance).success
    assert dg.materialize([appearance_stand_in, reader], selection=["reader"], instance=instance).success
    assert defs.resolve_job_def("both").execute_in_process(instance=instance).success
    assert seen == [True, False, True]


def test_per_clip_metadata_does_not_resolve_the_range_again_for_each_clip(dagster_home):
    """Each clip's metadata lands on its own partition; adding it does not ask the instance for the run's whole key
    range again (Dagster's public call does, 3 queries per call: ~600 per batch of 8 clips), so the instance's
    partition lookups do not grow with the clips of the range."""
    from hvbench_assets.runtime.batch import per_clip
    from hvbench_assets.defs.partitions import videos_partitions

    @dg.asset(partitions_def=videos_partitions)
    @per_clip
    def tiny(context):
        return dg.MaterializeResult(metadata={"clip": context.partition_key})

    lookups = []
    with dg.DagsterInstance.get() as instance:
        keys = [f"clip_{i}" for i in range(8)]
        instance.add_dynamic_partitions("videos", keys)
        real = instance.has_dynamic_partition
        instance.has_dynamic_partition = lambda *a, **kw: lookups.append(a) or real(*a, **kw)
        counts = []
        for last in (keys[1], keys[7]):
            lookups.clear()
            assert dg.materialize([tiny], instance=instance, tags={
                "dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": last}).success
            counts.append(len(lookups))
        assert counts[0] == counts[1], counts
        for key in keys:
            meta = latest_metadata(instance, "tiny", key)
            assert meta["clip"] == key and meta[STATUS] == "ok"


def test_a_split_batch_shares_its_clips_with_a_helper_process(dagster_home, tmp_path):
    """A step tagged `hvbench/split: clips` runs the second half of its clips in a forked helper: every clip's
    metadata (returned and added) lands on its own partition, a clip failing in the helper fails alone, and when
    the helper dies its clips run in the step's own process."""
    import os

    from hvbench_assets.runtime.batch import SPLIT_TAG, per_clip
    from hvbench_assets.runtime.executor import machine_cores
    from hvbench_assets.defs.partitions import videos_partitions

    if machine_cores() < 2:
        pytest.skip("a split needs a second core")
    marks = tmp_path / "marks"
    marks.mkdir()

    @dg.asset(partitions_def=videos_partitions, op_tags={SPLIT_TAG: "clips"},
              check_specs=[dg.AssetCheckSpec("fine", asset="halves")])
    @per_clip
    def halves(context):
        key = context.partition_key
        (marks / key).write_text(str(os.getpid()))  # a row written by whichever process ran the clip
        if key == "clip_6":
            raise ValueError(f"clip {key}: unreadable")
        if key == "clip_5" and (tmp_path / "die").exists() and os.getpid() != int((tmp_path / "parent").read_text()):
            os._exit(3)  # the helper dies mid-batch
        context.add_asset_metadata({"added": key})
        return dg.MaterializeResult(metadata={"pid": os.getpid()},
                                    check_results=[dg.AssetCheckResult(check_name="fine", passed=True)])

    keys = [f"clip_{i}" for i in range(8)]
    tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", keys)
        (tmp_path / "parent").write_text(str(os.getpid()))
        assert dg.materialize([halves], instance=instance, tags=tags).success
        pids = {k: int((marks / k).read_text()) for k in keys}
        assert {pids[k] for k in keys[:4]} == {os.getpid()} and len({pids[k] for k in keys[4:]}) == 1
        assert pids["clip_4"] != os.getpid()
        for key in keys:
            meta = latest_metadata(instance, "halves", key)
            if key == "clip_6":
                assert meta[STATUS] == "failed" and "clip_6: unreadable" in meta[ERROR]
            else:
                assert meta[STATUS] == "ok" and meta["added"] == key and meta["pid"] == pids[key]
        checks = {r.partition: r.status.value for r in instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey("halves"), "fine"), limit=20)}
        assert checks["clip_6"] == "FAILED" and checks["clip_0"] == checks["clip_7"] == "SUCCEEDED"

        (tmp_path / "die").write_text("")  # now the helper dies at clip_5: the step's process runs its clips
        result = dg.materialize([halves], instance=instance, tags=tags)
        assert result.success
        assert all(int((marks / k).read_text()) == os.getpid() for k in keys[4:] if k != "clip_6")
        assert any("ended without their results" in (e.message or "") for e in instance.all_logs(result.run_id))
        assert latest_metadata(instance, "halves", "clip_5")[STATUS] == "ok"


def test_a_batch_commits_its_clips_rows_together_and_a_clip_whose_rows_fail_fails_alone(dagster_home, tmp_path,
                                                                                        monkeypatch):
    """A batch step's clips' rows commit in one transaction at the step's end (core/warehouse/grouped.py); each
    clip's metadata still counts its table as written; a clip whose rows cannot be written fails on its own
    partition, saying why, and the other clips' rows are written."""
    from hvbench_assets.core.warehouse import TableSpec
    from hvbench_assets.runtime.batch import per_clip
    from hvbench_assets.defs.partitions import videos_partitions

    spec = TableSpec("batch_rows", (("video_id", "VARCHAR"), ("n", "INTEGER")))
    wh = Warehouse(tmp_path / "rows.duckdb")
    commits: list[int] = []
    real = Warehouse._commit_held
    monkeypatch.setattr(Warehouse, "_commit_held", lambda self, items: commits.append(len(items)) or real(self, items))

    @dg.asset(partitions_def=videos_partitions)
    @per_clip
    def rows_per_clip(context):
        key = context.partition_key
        n = "unwritable" if key == "clip_2" and (tmp_path / "bad").exists() else int(key[-1])
        wh.replace(spec, {"video_id": key}, [{"n": n}] * 2)
        return dg.MaterializeResult(metadata={"table_rows": wh.count(spec)})

    keys = [f"clip_{i}" for i in range(4)]
    tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", keys)
        assert dg.materialize([rows_per_clip], instance=instance, tags=tags).success
        assert commits == [4]  # one transaction for the four clips
        assert [latest_metadata(instance, "rows_per_clip", k)["table_rows"] for k in keys] == [2, 4, 6, 8]
        assert wh.count(spec) == 8

        (tmp_path / "bad").write_text("")
        commits.clear()
        assert dg.materialize([rows_per_clip], instance=instance, tags=tags).success
        assert commits == [4, 1, 1, 1, 1]  # together, then each clip alone once that failed
        meta = latest_metadata(instance, "rows_per_clip", "clip_2")
        assert meta[STATUS] == "failed" and "its rows were not written" in meta[ERROR] and "unwritable" in meta[ERROR]
        assert all(latest_metadata(instance, "rows_per_clip", k)[STATUS] == "ok" for k in keys if k != "clip_2")
        assert {r["video_id"]: r["n"] for r in wh.rows(spec)} == {"clip_0": 0, "clip_1": 1, "clip_2": 2, "clip_3": 3}


def test_a_stopped_split_batch_stops_its_helper(dagster_home, tmp_path):
    """When the step's own half is interrupted (the run being stopped), the helper is killed, not left writing."""
    import os
    import time

    from hvbench_assets.runtime.batch import SPLIT_TAG, per_clip
    from hvbench_assets.runtime.executor import machine_cores
    from hvbench_assets.defs.partitions import videos_partitions

    if machine_cores() < 2:
        pytest.skip("a split needs a second core")
    parent = os.getpid()

    @dg.asset(partitions_def=videos_partitions, op_tags={SPLIT_TAG: "clips"})
    @per_clip
    def stopped(context):
        if os.getpid() == parent:
            time.sleep(0.5)  # the helper has started on its first clip
            raise KeyboardInterrupt
        (tmp_path / context.partition_key).write_text("")
        time.sleep(2.0)
        return dg.MaterializeResult()

    keys = [f"clip_{i}" for i in range(4)]
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", keys)
        with pytest.raises(BaseException):
            dg.materialize([stopped], instance=instance, tags={
                "dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]})
    time.sleep(2.5)
    assert (tmp_path / "clip_2").exists() and not (tmp_path / "clip_3").exists()  # killed during its first clip


def test_a_split_waits_for_a_fresh_runtime_and_a_run_can_turn_it_off(dagster_home, tmp_path, monkeypatch):
    """An op tagged `hvbench/split_fresh: <runtime>` splits only while that native runtime has not run in the
    process (yuface's OpenMP crashed helpers forked after it ran); a run tagged `hvbench/split: off` splits nothing.
    Nor does a step in a process forked beside the run's own (the run's process keeps the other core busy).
    Each refusal is logged with its reason."""
    import os

    from hvbench_assets.core.processes import has_run, mark_ran
    from hvbench_assets.runtime import executor
    from hvbench_assets.runtime.executor import forked_step
    from hvbench_assets.runtime.batch import SPLIT_FRESH_TAG, SPLIT_TAG, per_clip
    from hvbench_assets.runtime.executor import machine_cores
    from hvbench_assets.defs.partitions import videos_partitions

    if machine_cores() < 2:
        pytest.skip("a split needs a second core")
    runtime = f"test-runtime-{tmp_path.name}"
    pids: dict[str, int] = {}

    @dg.asset(partitions_def=videos_partitions, op_tags={SPLIT_TAG: "clips", SPLIT_FRESH_TAG: runtime})
    @per_clip
    def fresh(context):
        mark_ran(runtime)
        (tmp_path / context.partition_key).write_text(str(os.getpid()))
        return dg.MaterializeResult()

    keys = [f"clip_{i}" for i in range(4)]
    tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}

    def run(extra=None):
        result = dg.materialize([fresh], instance=instance, tags={**tags, **(extra or {})})
        assert result.success
        pids.update({k: int((tmp_path / k).read_text()) for k in keys})
        return [e.message or "" for e in instance.all_logs(result.run_id)]

    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", keys)
        assert not has_run(runtime)
        logs = run({SPLIT_TAG: "off"})  # turned off for the run: everything here
        assert set(pids.values()) == {os.getpid()}
        assert any("in one process: the run is tagged hvbench/split=off" in m for m in logs)

        mark_ran.__globals__["_RAN"].discard(runtime)  # as if this process had not run it yet
        logs = run()
        assert {pids[k] for k in keys[:2]} == {os.getpid()} and os.getpid() not in {pids[k] for k in keys[2:]}
        assert any("clips clip_2, clip_3 in a helper process" in m for m in logs)

        assert has_run(runtime)  # this process's half ran it: the next run keeps its clips here
        logs = run()
        assert set(pids.values()) == {os.getpid()}
        assert any(f"{runtime} already ran in this process" in m for m in logs)

        monkeypatch.setattr(executor, "_FORKED_STEP", ["fresh"])  # as in a step's forked child
        assert forked_step() == "fresh"
        mark_ran.__globals__["_RAN"].discard(runtime)
        logs = run()
        assert set(pids.values()) == {os.getpid()}
        assert any("the step runs in a process forked beside the run's own" in m for m in logs)

SPLIT_L1 = '''
import json, os, sys
import dagster as dg
from hvbench_assets.core.processes import has_run
from hvbench_assets.core.vision.detectors import YuNetFaceDetector
from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES, HUMAN_TRACKS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.runtime.batch import SPLIT_TAG
from hvbench_assets.demo.main import clip_offline_labels_job

keys = json.loads(sys.argv[1])
wh = Warehouse(os.environ["HVBENCH_WAREHOUSE"])
tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
out = {"fresh": not has_run(YuNetFaceDetector.RUNTIME)}
with dg.DagsterInstance.get() as instance:
    for name, extra in (("split", {}), ("unsplit", {SPLIT_TAG: "off"})):
        result = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                asset_selection=[dg.AssetKey("video_probe"), dg.AssetKey("human_tracks")],
                                tags={**tags, **extra})
        logs = [e.message or "" for e in instance.all_logs(result.run_id)]
        out[name] = {
            "success": result.success,
            "helper": any("in a helper process" in m for m in logs),
            "tracks": {k: sorted((r["track_id"], r["first_frame"], r["last_frame"], r["n_detections"], r["score_mean"])
                           for r in wh.rows(HUMAN_TRACKS, video_id=k))
                       for k in keys},
            "boxes": {k: len(wh.rows(HUMAN_TRACK_BOXES, video_id=k)) for k in keys},
        }
print("RESULT " + json.dumps(out))
'''


@pytest.mark.slow
def test_l1_splits_a_batch_in_a_fresh_process_with_the_same_rows(tmp_path, monkeypatch, dagster_home):
    """L1 hands half a batch to a helper when its process has not detected faces yet (a run worker); the tracks
    and boxes equal those of the same batch in one process (`hvbench/split: off`). In a subprocess, because this
    test process has usually run YuNet already."""
    import json
    import subprocess
    import sys

    from hvbench_assets.runtime.executor import machine_cores

    if machine_cores() < 2:
        pytest.skip("a split needs a second core")
    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    for name in ("a_talk", "b_talk", "c_talk", "d_talk"):
        talking_clip(data / "inbox" / f"{name}.mp4", seconds=2.0)
    with dg.DagsterInstance.get() as instance:
        assert len(ingest_inbox(instance)) == 4
        keys = list(instance.get_dynamic_partitions("videos"))
    proc = subprocess.run([sys.executable, "-c", SPLIT_L1, json.dumps(keys)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    out = json.loads(line[len("RESULT "):])
    assert out["fresh"]
    split, unsplit = out["split"], out["unsplit"]
    assert split["success"] and unsplit["success"]
    assert split["helper"] and not unsplit["helper"]
    assert split["tracks"] == unsplit["tracks"] and split["boxes"] == unsplit["boxes"]
    assert all(len(split["tracks"][k]) == 2 for k in keys), split["tracks"]


def test_halves_balance_the_clips_weights():
    from hvbench_assets.runtime.batch import halves

    keys = [f"c{i}" for i in range(8)]
    seconds = dict(zip(keys, [2.0, 3.0, 3.4, 5.0, 6.0, 2.5, 3.5, 4.5]))  # the short-clip benchmark's batch
    mine, theirs = halves(keys, seconds)
    assert sorted(mine + theirs) == keys and mine == sorted(mine) and theirs == sorted(theirs)
    load = [sum(seconds[k] for k in side) for side in (mine, theirs)]
    assert abs(load[0] - load[1]) <= 0.2, load  # by count: 13.4 against 16.5
    assert halves(keys, {}) == (keys[:4], keys[4:])  # no weights: by count, in key order
    one_heavy = {**dict.fromkeys(keys, 1.0), "c3": 100.0}
    assert halves(keys, one_heavy) == (["c3"], [k for k in keys if k != "c3"])


def test_a_split_weighs_its_clips_and_survives_a_failing_estimate(dagster_home, tmp_path):
    import os

    from hvbench_assets.runtime.batch import SPLIT_TAG, per_clip
    from hvbench_assets.runtime.executor import machine_cores
    from hvbench_assets.defs.partitions import videos_partitions

    if machine_cores() < 2:
        pytest.skip("a split needs a second core")

    def cost(keys):
        if (tmp_path / "broken").exists():
            raise RuntimeError("no table yet")
        return {"clip_0": 10.0, "clip_1": 1.0, "clip_2": 1.0, "clip_3": 1.0, "other": 50.0}

    @dg.asset(partitions_def=videos_partitions, op_tags={SPLIT_TAG: "clips"})
    @per_clip(cost=lambda keys, **_: cost(keys))
    def weighed(context):
        (tmp_path / context.partition_key).write_text(str(os.getpid()))
        return dg.MaterializeResult(metadata={"clip": context.partition_key})

    keys = [f"clip_{i}" for i in range(4)]
    tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", keys)
        result = dg.materialize([weighed], instance=instance, tags=tags)
        assert result.success
        pids = {k: int((tmp_path / k).read_text()) for k in keys}
        assert pids["clip_0"] == os.getpid() and {pids[k] for k in keys[1:]} != {os.getpid()}
        assert len({pids[k] for k in keys[1:]}) == 1  # the three light clips together in the helper
        assert [latest_metadata(instance, "weighed", k)["clip"] for k in keys] == keys

        (tmp_path / "broken").write_text("")
        result = dg.materialize([weighed], instance=instance, tags=tags)
        assert result.success
        logs = [e.message or "" for e in instance.all_logs(result.run_id)]
        assert any("clip weights for the split unavailable (RuntimeError: no table yet); halves by count" in m
                   for m in logs)
        pids = {k: int((tmp_path / k).read_text()) for k in keys}
        assert {pids["clip_0"], pids["clip_1"]} == {os.getpid()} and os.getpid() not in {pids["clip_2"], pids["clip_3"]}
