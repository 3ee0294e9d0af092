"""human_tracks killed mid-way: the stored rows keep naming files that exist; the killed run, left STARTED
by the instance, is found and marked failed by `hvbench runs --fail-dead`; the next run swaps its media in
and shows the stored boxes on a key frame."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.vision import HUMAN_TRACKS
from hvbench_assets.defs.labels.vision import human_tracks
from hvbench_assets.defs.resources import SettingsResource, VisionResource, WarehouseResource
from hvbench_assets.testkit.decode_counter import count_decodes

ROOT = Path(__file__).resolve().parents[2]
RUN = textwrap.dedent("""
    import sys
    import dagster as dg
    from hvbench_assets.defs.labels.vision import human_tracks
    from hvbench_assets.defs.resources import SettingsResource, VisionResource, WarehouseResource

    data, wh = sys.argv[1], sys.argv[2]
    with dg.DagsterInstance.get() as instance:
        dg.materialize([human_tracks], partition_key="man", instance=instance, resources={
            "settings": SettingsResource(data_dir=data), "warehouse": WarehouseResource(path=wh),
            "vision": VisionResource()})
""")


def _materialize(instance, data: Path, wh_path: Path):
    return dg.materialize([human_tracks], partition_key="man", instance=instance, raise_on_error=False, resources={
        "settings": SettingsResource(data_dir=str(data)), "warehouse": WarehouseResource(path=str(wh_path)),
        "vision": VisionResource()})


def _crop_paths(wh) -> list[Path]:
    rows = wh.rows(HUMAN_TRACKS, video_id="man", order_by="track_id")
    return [Path(p) for r in rows for p in (r["face_clip_path"], r["body_clip_path"]) if p]


def test_killed_run_keeps_rows_and_media_consistent(tmp_path, man_talking_head, dagster_home, capsys):
    from hvbench_assets.cli import main as cli_main

    data, wh_path = tmp_path / "data", tmp_path / "wh.duckdb"
    wh = WarehouseResource(path=str(wh_path)).get()
    wh.replace(VIDEO_PROBE, {"video_id": "man"}, [{**probe_video(man_talking_head).as_row(), "status": "ok", "reason": None}])
    media = data / "media" / "man" / "human_tracks"
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("videos", ["man"])
        with count_decodes() as counts:
            first = _materialize(instance, data, wh_path)
        assert first.success
        # L1 and the key frame in its metadata come from one decode of the clip (+1: the probe's rotation check)
        assert counts.video(man_talking_head) == probe_video(man_talking_head).frame_count + 1
        old = _crop_paths(wh)
        assert old and all(p.is_file() for p in old)
        first_dir = old[0].parent
        assert first_dir.parent == media and first_dir.name == f"run-{first.run_id}"

        # what the UI shows: row counts, the clip, a key frame with the stored boxes (inline image + file)
        meta = first.asset_materializations_for_node("human_tracks")[0].metadata
        assert meta["dagster/row_count"].value == len(old) and meta["table_row_count"].value == len(old)  # face clips
        assert meta["clip"].value == str(man_talking_head)
        assert Path(meta["key_frame_file"].value).is_file() and meta["key_frame_file"].value.startswith(str(first_dir))
        assert meta["key_frame"].value.startswith("![key_frame](data:image/jpeg;base64,")
        assert meta["face_presence"].value == round(meta["face_presence"].value, 3)
        schema = human_tracks.specs_by_key[dg.AssetKey("human_tracks")].metadata["dagster/column_schema"]
        assert "face_clip_path" in [c.name for c in schema.columns]

        # a second run, killed while it writes its crops
        proc = subprocess.Popen([sys.executable, "-c", RUN, str(data), str(wh_path)], cwd=ROOT, env=os.environ,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 600
        while time.time() < deadline and proc.poll() is None:
            partial = [d for d in media.iterdir() if d != first_dir and any(d.iterdir())]
            if partial:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the second run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_dir = partial[0]
        assert _crop_paths(wh) == old and all(p.is_file() for p in old)  # previous rows, previous files
        killed = instance.get_run_by_id(killed_dir.name.removeprefix("run-"))
        assert killed.status == dg.DagsterRunStatus.STARTED  # the instance cannot tell on its own

        # the documented clean-up
        assert cli_main(["runs"]) == 0
        out = capsys.readouterr().out
        assert killed.run_id in out and "is gone" in out
        assert cli_main(["runs", "--fail-dead"]) == 0
        assert f"marked {killed.run_id} failed" in capsys.readouterr().out
        assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE

        third = _materialize(instance, data, wh_path)
        assert third.success
        new = _crop_paths(wh)
        assert all(p.is_file() and p.parent.name == f"run-{third.run_id}" for p in new)
        assert sorted(d.name for d in media.iterdir()) == [f"run-{third.run_id}"]  # old and killed media removed
