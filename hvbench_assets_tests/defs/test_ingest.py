import shutil

import dagster as dg
import pytest

from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.ingest.assets import scene_clips, video_probe
from hvbench_assets.defs.ingest.sensors import clip_sensor, inbox_sensor
from hvbench_assets.defs.resources import SettingsResource
from hvbench_assets.defs.sensor_state import read_state
from hvbench_assets_tests.defs.ingest_harness import (
    age,
    resources_for,
    run_concurrently,
)
from hvbench_assets.testkit.media_factory import bad_media_corpus, moving_square_video


def test_definitions_load_and_every_asset_is_described():
    from hvbench_assets.definitions import defs

    d = defs()
    dg.Definitions.validate_loadable(d)
    graph = d.get_repository_def().asset_graph
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"scene_clips", "video_probe"} <= keys
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.description, f"{key} has no description"
        assert node.group_name and node.group_name != "default", f"{key} has no stage group"
        assert node.code_version, f"{key} has no code_version"
    assert {s.name for s in d.sensors} >= {"inbox_sensor", "clip_sensor"}


def _tick(sensor, instance, resources, cursor=None):
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
    result = sensor(ctx)
    return result, ctx


def test_inbox_sensor_adds_partitions_requests_runs_and_notices_changes(tmp_path, man_talking_head):
    from hvbench_assets.defs.resources import SettingsResource

    # files aged 60+ s count as settled; the fresh `copying.mp4` must not settle between ticks on a slow machine
    res = {**resources_for(tmp_path), "settings": SettingsResource(data_dir=str(tmp_path), inbox_settle_s=30.0)}
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(man_talking_head, inbox / "Talk Show (1).mp4")
    age(inbox / "Talk Show (1).mp4")
    (inbox / "copying.mp4").write_bytes(b"\0" * 1000)  # fresh mtime: still being copied
    (inbox / "readme.txt").write_text("hello")
    with dg.instance_for_test() as instance:
        first, _ = _tick(inbox_sensor, instance, res)
        assert not first.run_requests  # nothing has looked the same twice yet
        with open(inbox / "copying.mp4", "ab") as f:  # the copy is still going on
            f.write(b"\0" * 1000)
        second, _ = _tick(inbox_sensor, instance, res, cursor=first.cursor)
        assert [r.partition_key for r in second.run_requests] == ["talk_show_1"]
        assert second.dynamic_partitions_requests[0].partition_keys == ["talk_show_1"]
        reg = Warehouse(tmp_path / "hvbench.duckdb").rows(RAW_VIDEOS, raw_video_id="talk_show_1")
        assert reg and reg[0]["path"].endswith("Talk Show (1).mp4") and reg[0]["file_size"] > 0
        assert len(second.cursor) == 16  # a token: the state itself is kept out of the sensor page
        state = read_state(instance, "inbox_sensor", second.cursor)
        assert "copying.mp4" not in [p for p, e in state["files"].items() if e.get("picked")]
        third, _ = _tick(inbox_sensor, instance, res, cursor=second.cursor)
        assert not third.run_requests  # unchanged: nothing again
        # the user replaces the file with other content
        shutil.copy(man_talking_head, inbox / "Talk Show (1).mp4")
        with open(inbox / "Talk Show (1).mp4", "ab") as f:
            f.write(b"\0" * 10)
        age(inbox / "Talk Show (1).mp4", 60)
        fourth, _ = _tick(inbox_sensor, instance, res, cursor=third.cursor)
        fifth, _ = _tick(inbox_sensor, instance, res, cursor=fourth.cursor)
        runs = list(fourth.run_requests or []) + list(fifth.run_requests or [])
        assert [r.partition_key for r in runs] == ["talk_show_1"]
        assert runs[0].run_key != second.run_requests[0].run_key


def _materialize(asset, key, res, instance):
    return dg.materialize([scene_clips, video_probe] if asset is None else [asset], partition_key=key,
                          resources=res, instance=instance, raise_on_error=False,
                          selection=None if asset is None else [asset])


def _register(tmp_path, instance, files: dict):
    """Register inbox files the way the sensor does (two ticks)."""
    res = resources_for(tmp_path)
    inbox = tmp_path / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        if src is not None:
            (inbox / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, inbox / name)
        age(inbox / name)
    first, _ = _tick(inbox_sensor, instance, res)
    second, _ = _tick(inbox_sensor, instance, res, cursor=first.cursor)
    for req in second.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions("raw_videos", list(req.partition_keys))
    return {r.tags["hvbench/source"]: r.partition_key for r in second.run_requests}, res


def test_scene_clips_and_probe_end_to_end(tmp_path, two_children):
    with dg.instance_for_test() as instance:
        keys, res = _register(tmp_path, instance, {"kids.mp4": two_children})
        raw = keys["kids.mp4"]
        assert _materialize(scene_clips, raw, res, instance).success
        wh = Warehouse(tmp_path / "hvbench.duckdb")
        clips = wh.rows(CLIPS, order_by="clip_index", raw_video_id=raw)
        assert [c["kept"] for c in clips] == [True, False]  # a jump cut at 4.08 s leaves a 0.24 s tail
        assert clips[1]["reason"].startswith("too short")
        assert instance.get_dynamic_partitions("videos") == ["kids__000"]
        # the clip sensor requests the per-clip run once per content
        s1, _ = _tick(clip_sensor, instance, res)
        assert [r.partition_key for r in s1.run_requests] == ["kids__000"]
        assert s1.run_requests[0].job_name == "clip_offline_labels_job"  # no MLLM describer configured
        # the Runs page filters every run of one inbox file by its tag, like the file's own run
        tags = s1.run_requests[0].tags
        assert tags["hvbench/source"] == "kids.mp4" and tags["hvbench/range"] == f"0.00-{clips[0]['end_s']:.2f}s"
        s2, _ = _tick(clip_sensor, instance, res, cursor=s1.cursor)
        assert not s2.run_requests
        with dg.instance_for_test() as fresh:  # a new Dagster home over the same warehouse
            s4, _ = _tick(clip_sensor, fresh, res)
            assert s4.dynamic_partitions_requests[0].partition_keys == ["kids__000"]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HVBENCH_MLLM_QWEN25_VL_BASE_URL", "http://127.0.0.1:9/v1")
            # the clip labelled offline is requested again, now with its MLLM descriptions
            s3, _ = _tick(clip_sensor, instance, resources_for(tmp_path, describer="qwen25_vl"), cursor=s2.cursor)
            assert [r.job_name for r in s3.run_requests] == ["clip_labels_job"]
            s5, _ = _tick(clip_sensor, instance, resources_for(tmp_path, describer="qwen25_vl"), cursor=s3.cursor)
            assert not s5.run_requests
        result = _materialize(video_probe, "kids__000", res, instance)
        assert result.success
        probe = wh.rows(VIDEO_PROBE, video_id="kids__000")[0]
        assert probe["status"] == "ok" and abs(probe["duration_s"] - 4.08) < 0.05 and probe["has_audio"]
        assert probe["backend"] == "pyav"
        assert len(wh.rows(RAW_VIDEOS, raw_video_id=raw)[0]["sha256"]) == 64  # hashed by scene_clips
        # re-materializing replaces, never duplicates
        assert _materialize(scene_clips, raw, res, instance).success
        assert _materialize(video_probe, "kids__000", res, instance).success
        assert wh.count(CLIPS, raw_video_id=raw) == 2 and wh.count(VIDEO_PROBE, video_id="kids__000") == 1
        # a lost cursor (reset, or a new Dagster home): rows exist for this content and code version, so the
        # clip and the file are not run again...
        assert not _tick(clip_sensor, instance, res)[0].run_requests
        first, _ = _tick(inbox_sensor, instance, res)
        assert not first.run_requests and not _tick(inbox_sensor, instance, res, cursor=first.cursor)[0].run_requests
        with pytest.MonkeyPatch.context() as mp:  # ...but descriptions never written for it are
            mp.setenv("HVBENCH_MLLM_QWEN25_VL_BASE_URL", "http://127.0.0.1:9/v1")
            lost, _ = _tick(clip_sensor, instance, resources_for(tmp_path, describer="qwen25_vl"))
            assert [r.job_name for r in lost.run_requests] == ["clip_labels_job"]
        # new content in the same file: requested again, and so is its changed clip
        moving_square_video(tmp_path / "inbox" / "kids.mp4", seconds=2.0, color=(200, 60, 30))
        age(tmp_path / "inbox" / "kids.mp4")
        first, _ = _tick(inbox_sensor, instance, res)
        second, _ = _tick(inbox_sensor, instance, res, cursor=first.cursor)
        assert [r.partition_key for r in second.run_requests] == [raw]
        assert _materialize(scene_clips, raw, res, instance).success
        assert [r.partition_key for r in _tick(clip_sensor, instance, res, cursor=s2.cursor)[0].run_requests] == ["kids__000"]
        assert [r.partition_key for r in _tick(clip_sensor, instance, res)[0].run_requests] == ["kids__000"]


def test_bad_files_fail_their_own_partition_with_a_clear_reason(tmp_path, man_talking_head):
    corpus = bad_media_corpus(tmp_path / "bad")
    files = {p.name: p for p in corpus.values()}
    files["Café – vidéo №1 (final).mp4"] = man_talking_head
    files["no_audio.mp4"] = moving_square_video(tmp_path / "no_audio_src.mp4", seconds=2, tone_hz=None)
    with dg.instance_for_test() as instance:
        keys, res = _register(tmp_path, instance, files)
        assert set(keys) == set(files)
        # the talking head scores 0.92 on the paper's motion scale (static below 1.2): keep it here
        res["settings"] = SettingsResource(data_dir=str(tmp_path), inbox_settle_s=1.0, min_motion=0.5)
        expected = {"truncated.mp4": "truncated or corrupt", "empty.mp4": "empty file",
                    "notes.mp4": "not a readable media container", "audio_only.mp4": "audio-only file"}
        for name, reason in expected.items():
            result = _materialize(scene_clips, keys[name], res, instance)
            assert not result.success
            failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
            text = str(failure.step_failure_data.error.message) + str(failure.step_failure_data.user_failure_data)
            assert name in text and reason in text, text
        for name in ("Café – vidéo №1 (final).mp4", "no_audio.mp4"):
            assert _materialize(scene_clips, keys[name], res, instance).success
        assert keys["Café – vidéo №1 (final).mp4"] == "cafe_video_no1_final"
        clips = sorted(instance.get_dynamic_partitions("videos"))
        assert clips == ["cafe_video_no1_final__000", "no_audio__000"]
        for c in clips:
            assert _materialize(video_probe, c, res, instance).success
        wh = Warehouse(tmp_path / "hvbench.duckdb")
        assert wh.rows(VIDEO_PROBE, video_id="no_audio__000")[0]["has_audio"] is False


def test_six_partitions_concurrently_with_the_multiprocess_executor(tmp_path, monkeypatch, dagster_home):
    data = tmp_path / "data"
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(data))
    monkeypatch.setenv("HVBENCH_WAREHOUSE", str(data / "hvbench.duckdb"))
    monkeypatch.setenv("HVBENCH_INBOX_SETTLE_S", "1")
    src = {f"clip{i}.mp4": moving_square_video(tmp_path / f"src{i}.mp4", seconds=1.5, size=(320, 240),
                                               color=(40 * i, 200, 100)) for i in range(6)}
    with dg.DagsterInstance.get() as instance:
        keys, _ = _register(data, instance, src)
    assert run_concurrently("raw_job", list(keys.values())) == [0] * 6
    with dg.DagsterInstance.get() as instance:
        clips = sorted(instance.get_dynamic_partitions("videos"))
    assert len(clips) == 6
    assert run_concurrently("clip_job", clips) == [0] * 6
    assert run_concurrently("clip_job", clips) == [0] * 6  # again: rows are replaced, not added
    wh = Warehouse(data / "hvbench.duckdb")
    assert wh.query("SELECT count(*) AS n, count(DISTINCT video_id) AS d FROM video_probe") == [{"n": 6, "d": 6}]
    assert wh.query("SELECT count(*) AS n FROM clips WHERE kept") == [{"n": 6}]


def test_keys_survive_a_reset_cursor_and_a_resplit_forgets_vanished_clips(tmp_path, man_talking_head, two_children):
    with dg.instance_for_test() as instance:
        keys, res = _register(tmp_path, instance, {"talk.mp4": man_talking_head, "sub/talk.mp4": two_children})
        assert sorted(keys.values())[0] == "talk" and len(set(keys.values())) == 2
        # a new cursor (sensor reset, new Dagster home) keeps every file on its key: the registry remembers
        again, _ = _register(tmp_path, instance, {"talk.mp4": None, "sub/talk.mp4": None})
        assert again == keys
        raw = keys["sub/talk.mp4"]
        assert _materialize(scene_clips, raw, res, instance).success
        clip = f"{raw}__000"
        assert _materialize(video_probe, clip, res, instance).success
        wh = Warehouse(tmp_path / "hvbench.duckdb")
        assert wh.count(VIDEO_PROBE, video_id=clip) == 1
        # the file is replaced by a static video: its old clip and that clip's rows disappear
        import numpy as np

        from hvbench_assets.core.media import write_video

        write_video(tmp_path / "inbox" / "sub" / "talk.mp4", (np.full((240, 320, 3), 90, np.uint8) for _ in range(50)), fps=25)
        assert _materialize(scene_clips, raw, res, instance).success
        assert clip not in instance.get_dynamic_partitions("videos")
        assert wh.count(VIDEO_PROBE, video_id=clip) == 0
        assert not wh.rows(CLIPS, raw_video_id=raw)[0]["kept"]


def test_inbox_sensor_says_once_what_it_passes_over_and_status_lists_it(tmp_path, capfd):
    from hvbench_assets.cli import main as cli_main
    from hvbench_assets.defs.resources import SettingsResource
    from hvbench_assets_tests.core.ingest.test_inbox import _hostile_inbox

    inbox, outside = _hostile_inbox(tmp_path)
    for name in ("good.mp4", "..escape.mp4"):
        age(inbox / name)
    res = resources_for(tmp_path)
    with dg.instance_for_test() as instance:
        first, _ = _tick(inbox_sensor, instance, res)
        second, _ = _tick(inbox_sensor, instance, res, cursor=first.cursor)
        third, _ = _tick(inbox_sensor, instance, res, cursor=second.cursor)
        assert [r.partition_key for r in second.run_requests] == ["good"] and not third.run_requests
        lines = [m for m in capfd.readouterr().err.splitlines() if "passed over" in m]  # the sensor's log
        for entry in ("..%2F..%2Fescape/", "..escape.mp4", "gone.mp4", "shots", "passwd.mp4", "pipe.mp4"):
            said = [m for m in lines if f"passed over {entry}:" in m]
            assert len(said) == 1, (entry, lines)
        # with the folder outside allowed, the link into it is followed; /etc/passwd still never is
        allowed = {**res, "settings": SettingsResource(data_dir=str(tmp_path), inbox_settle_s=1.0,
                                                      allowed_roots=str(outside))}
        age(outside / "shots" / "far.mp4")
        fourth, _ = _tick(inbox_sensor, instance, allowed, cursor=third.cursor)
        fifth, _ = _tick(inbox_sensor, instance, allowed, cursor=fourth.cursor)
        assert [r.tags["hvbench/source"] for r in fifth.run_requests] == ["shots/far.mp4"]
    paths = [r["path"] for r in Warehouse(tmp_path / "hvbench.duckdb").rows(RAW_VIDEOS)]
    assert sorted(paths) == sorted([str((inbox / "good.mp4").resolve()), str((outside / "shots" / "far.mp4").resolve())])
    # `hvbench status` lists what the sensor passes over now, with the reasons
    capfd.readouterr()
    assert cli_main(["status", "--warehouse", str(tmp_path / "hvbench.duckdb")]) == 0
    out = capfd.readouterr().out
    assert "registered files: 2" in out and "raw_videos/good" in out
    assert "passwd.mp4: symlink to /etc/passwd, outside the inbox and HVBENCH_ALLOWED_ROOTS: not followed" in out
    assert "..escape.mp4: hidden name" in out and "gone.mp4: broken symlink" in out
    assert "shots/far.mp4" not in out.split("passed over by the inbox sensor")[1]  # followed now, not listed
    assert cli_main(["status", "--warehouse", str(tmp_path / "none.duckdb")]) == 0
    assert "no warehouse at" in capfd.readouterr().out and not (tmp_path / "none.duckdb").exists()
