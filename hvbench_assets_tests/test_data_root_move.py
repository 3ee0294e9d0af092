"""Media on shared storage: the warehouse stores media paths relative to the data root, so the whole data root
can move (or be mounted elsewhere on another node) and every read follows it.

Real runs on a generated clip with two people: inbox sensor, `raw_video_job`, clip sensor and
`clip_offline_labels_job` with the data root at A; then the data root moves to B (A is gone) and the CLI's
`questions` and `explain`, the review app's video lookup, the benchmark export and a re-materialization
all work from B, and no stored text names A."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest
from starlette.testclient import TestClient

from hvbench_assets.cli import main as cli_main
from hvbench_assets.core.benchmark.tables import EXPORT_ITEMS
from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE, load_clip
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.vision.tables import HUMAN_TRACKS, load_tracks
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.pipeline_runs import (
    execute,
    ingest_inbox,
    new_clips,
    talking_clip,
    use_data_root,
    values_naming,
)


@pytest.mark.slow
def test_the_data_root_moves_and_every_read_follows(tmp_path, monkeypatch, dagster_home, capsys):
    from hvbench_assets.defs.resources import build_resources
    from hvbench_assets.demo.main import clip_offline_labels_job, raw_video_job
    from hvbench_assets.demo.benchmark import assemble
    from hvbench_assets.review.app import ReviewConfig, create_app

    a = tmp_path / "node-a" / "hvdata"
    use_data_root(monkeypatch, a)
    talking_clip(a / "inbox" / "talk.mp4", seconds=9.0)  # over 8 s: an AVAD question with its question video
    with dg.DagsterInstance.get() as instance:
        assert ingest_inbox(instance) == ["talk"]
        (clip,) = new_clips(instance)
        assert execute(clip_offline_labels_job, instance, clip)

    wh = Warehouse(a / "hvbench.duckdb")
    assert wh.rows(RAW_VIDEOS)[0]["path"] == "inbox/talk.mp4"
    assert wh.rows(CLIPS, raw_video_id="talk")[0]["clip_path"] == f"clips/talk/{clip}.mp4"
    assert wh.rows(VIDEO_PROBE, video_id=clip)[0]["path"] == f"clips/talk/{clip}.mp4"
    crops = [r["face_clip_path"] for r in wh.rows(HUMAN_TRACKS, video_id=clip) if r["status"] == "ok"]
    assert len(crops) == 2 and all(c.startswith(f"media/{clip}/human_tracks/") for c in crops)
    (q,) = [q for q in wh.rows(QUESTIONS) if q["video_path"]]  # AVAD: a rendered question video (reversed sound)
    assert q["video_path"].startswith(f"media/{clip}/questions/")
    assert values_naming(wh, a) == []

    # the data root moves: B is another absolute path, A no longer exists
    b = tmp_path / "node-b" / "mnt" / "shared"
    b.parent.mkdir(parents=True)
    shutil.move(a, b)
    assert not a.exists()
    use_data_root(monkeypatch, b)
    wh = Warehouse(b / "hvbench.duckdb")
    assert load_clip(wh, clip).path == b / "clips" / "talk" / f"{clip}.mp4" and load_clip(wh, clip).path.is_file()
    assert all(t.face_clip_path.is_file() and t.face_clip_path.is_relative_to(b) for t in load_tracks(wh, clip))

    capsys.readouterr()
    assert cli_main(["questions"]) == 0
    out = capsys.readouterr().out
    video = b / q["video_path"]
    assert f"video: {video}" in out and video.is_file()
    assert cli_main(["explain", q["question_id"], "--json"]) == 0
    chain = json.loads(capsys.readouterr().out)
    assert chain["question"]["video_path"] == str(video)
    assert chain["source"]["clip"]["path"] == str(b / "clips" / "talk" / f"{clip}.mp4")
    assert chain["source"]["raw"]["path"] == str(b / "inbox" / "talk.mp4")
    assert cli_main(["status"]) == 0
    assert str(b / "inbox" / "talk.mp4") in capsys.readouterr().out

    # the review app plays the question video from B
    app = create_app(ReviewConfig(warehouse=b / "hvbench.duckdb", data_dir=b))
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.post("/login", json={"name": "rev"}).status_code == 200
    media = client.get(f"/media/{q['question_id']}")
    assert media.status_code == 200 and media.content == video.read_bytes()

    monkeypatch.setenv("HVBENCH_EXPORT_UNREVIEWED", "1")  # nobody reviewed: export them marked unreviewed
    benchmark = build_resources()["benchmark"].process_config_and_initialize()
    with dg.DagsterInstance.get() as instance:
        # the export copies the question videos it finds through the stored relative paths
        built, lines = assemble(instance, wh, benchmark, str(b))
        assert built, lines
        exported = wh.rows(EXPORT_ITEMS, benchmark=benchmark.name)
        assert [e["question_id"] for e in exported] == [q["question_id"]], lines
        assert exported[0]["folder"] == f"benchmarks/{benchmark.name}"
        copied = b / exported[0]["folder"] / exported[0]["video"]
        assert copied.read_bytes() == video.read_bytes()
        # re-materialization from B: the raw file through raw_videos.path, the clip through clips.clip_path
        assert execute(raw_video_job, instance, "talk")
        assert execute(clip_offline_labels_job, instance, clip, assets=["video_probe", "human_tracks", "person_count"])
    crops = [r["face_clip_path"] for r in wh.rows(HUMAN_TRACKS, video_id=clip) if r["status"] == "ok"]
    assert len(crops) == 2 and all((b / c).is_file() for c in crops)
    assert values_naming(wh, a, b) == []  # nothing stored names either host path


@pytest.mark.slow
def test_a_copied_data_folder_and_dagster_home_start_no_run_and_show_paths_under_the_new_folder(
        tmp_path, monkeypatch):
    """A user copies the data folder and DAGSTER_HOME elsewhere (`cp -r`: the files get new mtimes) and points the
    settings at the copies: the inbox sensor recognises the files by their content (sha256 against `raw_videos`),
    so neither sensor starts a run, and the metadata the UI shows names paths relative to the data folder."""
    import os
    import time

    from hvbench_assets.core.media.paths import resolve
    from hvbench_assets.defs.ingest.sensors import clip_sensor, inbox_sensor
    from hvbench_assets.defs.metadata import DATA_FOLDER
    from hvbench_assets.demo.main import clip_offline_labels_job, raw_video_job
    from hvbench_assets_tests.pipeline_runs import _apply, _resources, latest_metadata

    def tick(sensor, instance, cursor):
        result = sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=_resources()))
        return _apply(result, instance), getattr(result, "cursor", cursor)

    a, home_a = tmp_path / "a" / "hvdata", tmp_path / "a" / "dagster_home"
    home_a.mkdir(parents=True)
    (home_a / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home_a))
    use_data_root(monkeypatch, a)
    talking_clip(a / "inbox" / "talk.mp4", seconds=2.5)
    with dg.DagsterInstance.get() as instance:
        inbox_cursor, requests = None, []
        for _ in range(2):  # a file is read once it looked the same twice
            runs, inbox_cursor = tick(inbox_sensor, instance, inbox_cursor)
            requests += runs
        assert [r.partition_key for r in requests] == ["talk"]
        assert execute(raw_video_job, instance, "talk", requests[0].tags)
        (request,), clip_cursor = tick(clip_sensor, instance, None)
        clip = request.partition_key
        assert execute(clip_offline_labels_job, instance, clip, request.tags, assets=["video_probe", "human_tracks"])
        assert tick(inbox_sensor, instance, inbox_cursor)[0] == []  # nothing new

    # the copies: new mtimes on every file (set an hour back, so the sensor need not wait for them to settle)
    b, home_b = tmp_path / "b" / "restored" / "hvdata", tmp_path / "b" / "restored" / "dagster_home"
    shutil.copytree(a, b, copy_function=shutil.copy)
    shutil.copytree(home_a, home_b, copy_function=shutil.copy)
    copied = b / "inbox" / "talk.mp4"
    old = time.time() - 3600
    os.utime(copied, (old, old))
    assert copied.stat().st_mtime != (a / "inbox" / "talk.mp4").stat().st_mtime
    shutil.rmtree(tmp_path / "a")
    monkeypatch.setenv("DAGSTER_HOME", str(home_b))
    use_data_root(monkeypatch, b)
    with dg.DagsterInstance.get() as instance:
        # two evaluations: a file whose size or mtime changed is otherwise picked up at the second, once settled
        for _ in range(2):
            runs, inbox_cursor = tick(inbox_sensor, instance, inbox_cursor)
            assert runs == []
        assert tick(clip_sensor, instance, clip_cursor)[0] == []
        # the registry follows the file's new mtime: a lost cursor reads nothing again either
        assert Warehouse(b / "hvbench.duckdb").rows(RAW_VIDEOS)[0]["mtime"] == copied.stat().st_mtime
        assert tick(inbox_sensor, instance, None)[0] == []

        # the UI's metadata: paths relative to the data folder, which is named once (where it was then)
        probe = latest_metadata(instance, "video_probe", clip)
        tracks = latest_metadata(instance, "human_tracks", clip)
        assert probe["path"] == f"clips/talk/{clip}.mp4" and probe["source"] == "inbox/talk.mp4"
        assert probe[DATA_FOLDER] == tracks[DATA_FOLDER] == str(a)
        for meta, names in ((probe, ["path", "source"]), (tracks, ["clip", "crop_dir", "key_frame_file"])):
            for name in names:
                assert not os.path.isabs(meta[name]), (name, meta[name])
                assert resolve(meta[name]).is_relative_to(b) and resolve(meta[name]).exists(), (name, meta[name])
