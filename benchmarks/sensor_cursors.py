"""Cursor length of inbox_sensor and clip_sensor for an inbox of eleven real files, before (the state itself as
the JSON cursor, as the sensors stored it until now) and after (a token naming the state, which is kept in the
instance's key-value store). Also checks that a lost cursor requests nothing for work already done.

    PYTHONPATH=. .venv/bin/python benchmarks/sensor_cursors.py [--videos /work/shared/videos]

The shared clips are copied in under eleven names (file names as people give them), then split for real."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import dagster as dg

NAMES = ["Interview 2024-03-12 (camera A).mp4", "Interview 2024-03-12 (camera B).mp4", "family dinner.MOV.mp4",
         "Kids playing in the garden - summer.mp4", "talk_show_episode_01.mp4", "talk_show_episode_02.mp4",
         "street scene, downtown.mp4", "Meeting recording 2024-05-02 10-00.mp4", "vlog day 3.mp4",
         "Café – vidéo №1 (final).mp4", "wedding speech/best man.mp4"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--videos", type=Path, default=Path("/work/shared/videos"))
    args = parser.parse_args()
    sources = sorted(args.videos.glob("*.mp4"))
    if not sources:
        raise SystemExit(f"no .mp4 in {args.videos}")
    root = Path(tempfile.mkdtemp(prefix="hvbench_cursors_"))
    os.environ["DAGSTER_HOME"] = str(root / "home")
    os.environ["HVBENCH_DATA_DIR"] = str(root / "data")  # paths are stored relative to it
    os.environ["HVBENCH_WAREHOUSE"] = str(root / "data" / "hvbench.duckdb")
    (root / "home").mkdir()
    (root / "home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")

    from hvbench_assets.defs.ingest.assets import scene_clips
    from hvbench_assets.defs.ingest.sensors import clip_sensor, inbox_sensor
    from hvbench_assets.defs.resources import MllmResource, SettingsResource, WarehouseResource
    from hvbench_assets.defs.sensor_state import read_state

    res = {"settings": SettingsResource(data_dir=str(root / "data"), inbox_settle_s=1.0),
           "warehouse": WarehouseResource(path=str(root / "data" / "hvbench.duckdb")), "mllm": MllmResource()}
    inbox = root / "data" / "inbox"
    old = time.time() - 3600
    for i, name in enumerate(NAMES):
        (inbox / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(sources[i % len(sources)], inbox / name)
        os.utime(inbox / name, (old, old))

    def tick(sensor, instance, cursor=None):
        result = sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=res))
        for req in getattr(result, "dynamic_partitions_requests", None) or []:
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        return result

    with dg.DagsterInstance.get() as instance:
        first = tick(inbox_sensor, instance)
        second = tick(inbox_sensor, instance, first.cursor)
        raws = [r.partition_key for r in second.run_requests]
        for key in raws:
            assert dg.materialize([scene_clips], partition_key=key, resources=res, instance=instance).success, key
        clips = tick(clip_sensor, instance)
        rows = []
        for name, result in (("inbox_sensor", second), ("clip_sensor", clips)):
            state = read_state(instance, name, result.cursor)
            rows.append((name, len(json.dumps(state)), len(result.cursor)))
        print(f"{len(NAMES)} inbox files -> {len(raws)} raw_video_job run(s), {len(clips.run_requests)} per-clip run(s)")
        print(f"{'sensor':14s} {'cursor before (chars)':>22s} {'cursor now (chars)':>19s}")
        for name, before, now in rows:
            print(f"{name:14s} {before:22d} {now:19d}")
        # a reset cursor: the warehouse says the files are split (the clips' rows come from their runs)
        lost = tick(inbox_sensor, instance)
        lost2 = tick(inbox_sensor, instance, lost.cursor)
        print(f"inbox_sensor after a reset cursor: {len(lost.run_requests) + len(lost2.run_requests)} run request(s)")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
