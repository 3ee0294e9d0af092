"""How often each stage decodes its video, measured around PyAV itself while the real jobs run.

A 1920x1080 25 fps source is generated (two shots: the shared clips `two_people_talking` then
`two_children`, enlarged, with their sound; moving shapes and a tone when ../shared is absent), dropped
into the inbox of a temporary instance and data folder, and processed the way the daemon does it:
`inbox_sensor`, `raw_video_job` (scene_clips), then `clip_sensor` and `clip_offline_labels_job` for
every kept clip. Every Python process started meanwhile (this one and each Dagster step process) loads
a `sitecustomize` hook that wraps `av.open` and `CodecContext.decode` and counts the frames every codec
returns, per file; at exit it records them with the process's peak RSS.

Prints per run and step: video frames decoded of the run's input ÷ frames in that input (the source
file for the raw job, the clip for a clip job; other files, such as face-crop clips, separately), the
step's wall ÷ the input's duration and the step process's peak RSS. Targets (issue 15): ≤ 1.1 for the
raw job, 1.0 for a clip job.

`--variants` measures only the raw-file split, in this process, on generated short H.264 files of
several structures (GOP sizes, B-frames or none, cuts on and off keyframes, 1080p and small): frames
decoded ÷ frames in the file and how each clip was made, without Dagster.

Run: .venv/bin/python benchmarks/decodes.py [--seconds 20] [--keep] [--variants]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "videos"
SIZE, FPS = (1920, 1080), 25

SITECUSTOMIZE = '''
import os
if os.environ.get("HVBENCH_DECODE_LOG"):
    import atexit, json, multiprocessing.util, resource, time
    from hvbench_assets.testkit.decode_counter import DecodeCounts, install
    _counts, _t0 = DecodeCounts(), [time.time()]
    install(_counts)

    def _dump():
        rec = {"pid": os.getpid(), "t0": _t0[0], "t1": time.time(),
               "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               "counts": [[p, k, n] for (p, k), n in _counts.items()]}
        with open(os.path.join(os.environ["HVBENCH_DECODE_LOG"], f"{os.getpid()}.json"), "w") as f:
            json.dump(rec, f)

    def _forked(_):  # a forked step process: its own counts, written when multiprocessing ends it
        _counts.clear()
        _t0[0] = time.time()
        multiprocessing.util.Finalize(None, _dump, exitpriority=100)

    atexit.register(_dump)
    multiprocessing.util.register_after_fork(_counts, _forked)
'''


def make_source(path: Path, seconds: float) -> Path:
    """Two shots at 1080p with sound (real people when ../shared/videos is there)."""
    import cv2
    import numpy as np

    from hvbench_assets.core.media import iter_frames, load_audio, write_video
    from hvbench_assets.core.media.encode import AUDIO_RATE

    first = seconds * 2 / 3
    parts = [("two_people_talking.mp4", first), ("two_children.mp4", seconds - first)]
    if all((SHARED / name).exists() for name, _ in parts):
        def frames():
            for name, span in parts:
                n = 0
                while n < round(span * FPS):  # loop the clip if it is shorter than its span
                    for f in iter_frames(SHARED / name):
                        if n >= round(span * FPS):
                            break
                        yield cv2.resize(f.image, SIZE, interpolation=cv2.INTER_CUBIC)
                        n += 1

        audio = np.concatenate([np.resize(load_audio(SHARED / name, sample_rate=AUDIO_RATE), int(span * AUDIO_RATE))
                                for name, span in parts])
    else:
        print(f"({SHARED} is absent: moving shapes and a tone instead of people)")
        w, h = SIZE

        def frames():
            for i in range(round(seconds * FPS)):
                img = np.full((h, w, 3), 60 if i < first * FPS else 160, np.uint8)
                x = int((w - 300) * (i % 100) / 100)
                img[h // 2 - 150 : h // 2 + 150, x : x + 300] = (40, 200, 220)
                yield img

        t = np.arange(int(seconds * AUDIO_RATE)) / AUDIO_RATE
        audio = (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return write_video(path, frames(), fps=FPS, audio=audio)


VARIANTS = [  # name, size, frames, keyint, B-frames, b-pyramid, cuts (frame indices)
    ("1080p gop250 b3, cut off key", (1920, 1080), 250, 250, 3, "normal", (167,)),
    ("1080p gop50 b3, cuts on/off keys", (1920, 1080), 250, 50, 3, "normal", (100, 163)),
    ("480p gop250 b0, two cuts off keys", (854, 480), 300, 250, 0, "none", (88, 201)),
    ("480p gop30 b2 strict, cut 1 frame after a key", (854, 480), 300, 30, 2, "strict", (121, 240)),
    ("360p gop12 b3, five cuts", (640, 360), 300, 12, 3, "normal", (37, 60, 121, 180, 259)),
]


def variants(tmp: Path) -> None:
    """Raw-file split on generated files of several structures; decodes counted around PyAV."""
    sys.path.insert(0, str(ROOT))
    from hvbench_assets.core.ingest.scenes import ClipFilter
    from hvbench_assets.core.ingest.split import split_video
    from hvbench_assets.core.media import probe_video
    from hvbench_assets.testkit.decode_counter import count_decodes
    from hvbench_assets.testkit.stamped_video import stamped_source

    print(f"{'source':48} {'decoded/frames':>14} {'wall s':>7}  clips")
    for name, size, n, keyint, bframes, pyramid, cuts in VARIANTS:
        src = stamped_source(tmp / "v.mp4", n=n, keyint=keyint, bframes=bframes, pyramid=pyramid, cuts=cuts, size=size)
        header = probe_video(src, count_frames=False)
        out = tmp / "clips"
        out.mkdir(exist_ok=True)
        t0 = time.time()
        with count_decodes() as counts:
            result = split_video(src, header, ClipFilter(min_motion=0.0), lambda i: out / f"c{i}.mp4")
        wall = time.time() - t0
        hows = ", ".join(f"{seg.start_s:.2f}s {result.how.get(seg.index, 'dropped')}" for seg in result.analysis.segments)
        print(f"{name:48} {counts.video(src) / header.frame_count:14.2f} {wall:7.1f}  {hows}", flush=True)
        shutil.rmtree(out)


def setup(tmp: Path) -> Path:
    home, data, hook, log = tmp / "dagster_home", tmp / "data", tmp / "hook", tmp / "decodes"
    for d in (home, data, hook, log):
        d.mkdir(parents=True)
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    os.environ.update({
        "DAGSTER_HOME": str(home), "HVBENCH_DATA_DIR": str(data), "HVBENCH_INBOX_SETTLE_S": "0",
        "HF_HUB_OFFLINE": "1", "YOLO_OFFLINE": "1", "HVBENCH_DECODE_LOG": str(log),
        "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    })
    sys.path.insert(0, str(ROOT))
    return log


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of the generated 1080p source")
    ap.add_argument("--keep", action="store_true", help="keep the temporary instance and data")
    ap.add_argument("--variants", action="store_true", help="only the raw split on generated files of several structures")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hvbench-decodes-"))
    if args.variants:
        try:
            variants(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0
    log = setup(tmp)

    import dagster as dg

    from hvbench_assets.core.media import probe_video
    from hvbench_assets.core.media.paths import resolve
    from hvbench_assets.defs.ingest.sensors import clip_sensor, inbox_sensor
    from hvbench_assets.defs.resources import build_resources
    from hvbench_assets.demo.main import clip_offline_labels_job, raw_video_job  # reconstructable
    from hvbench_assets.testkit.decode_counter import DecodeCounts, install

    here = DecodeCounts()  # steps that run inside this process (an in-process executor)
    install(here)
    resources = build_resources()
    settings = resources["settings"].process_config_and_initialize()
    settings.inbox.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    src = make_source(settings.inbox / "talk_1080p.mp4", args.seconds)
    print(f"generated {src.name}: {args.seconds:g} s at {SIZE[0]}x{SIZE[1]} in {time.time() - t0:.0f} s")
    old = time.time() - 3600
    os.utime(src, (old, old))

    def _apply_partitions(result, instance) -> list:
        """What the daemon does with a sensor result's partition requests; its run requests."""
        for req in result.dynamic_partitions_requests or []:
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        return list(result.run_requests or [])

    runs = []  # (label, run_id, input file, before, after) of each job run
    with dg.DagsterInstance.get() as instance:
        def execute(job, key: str, label: str, input_file: Path):
            before = DecodeCounts(here)
            result = dg.execute_job(dg.reconstructable(job), instance=instance, tags={"dagster/partition": key})
            runs.append((label, result.run_id, input_file, before, DecodeCounts(here)))
            print(f"  {label}: {'ok' if result.success else 'FAILED'}", flush=True)

        cursor = None
        for _ in range(2):  # the sensor wants to see a file unchanged twice
            result = inbox_sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources))
            cursor = result.cursor
            requests = _apply_partitions(result, instance)
        for req in requests:
            execute(raw_video_job, req.partition_key, f"raw_video_job raw_videos/{req.partition_key}", src)
        clips = clip_sensor(dg.build_sensor_context(instance=instance, resources=resources))
        wh = resources["warehouse"].process_config_and_initialize().get()
        for req in _apply_partitions(clips, instance) if isinstance(clips, dg.SensorResult) else []:
            stored = wh.query("SELECT clip_path FROM clips WHERE video_id = ?", [req.partition_key])[0]["clip_path"]
            path = resolve(stored)  # relative to the data root
            execute(clip_offline_labels_job, req.partition_key, f"{req.job_name} videos/{req.partition_key}", path)
        report(instance, runs, log, probe_video)
    if args.keep:
        print(f"\nkept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def step_spans(instance, run_id: str) -> dict[str, tuple[float, float, int]]:
    """Each ended step of a run: (STEP_START time, end time, the process that ran it)."""
    start, out = {}, {}
    for rec in instance.all_logs(run_id):
        ev = rec.dagster_event
        if ev is None or not ev.step_key:
            continue
        if ev.event_type_value == "STEP_START":
            start[ev.step_key] = (rec.timestamp, ev.pid)
        elif ev.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and ev.step_key in start:
            out[ev.step_key] = (start[ev.step_key][0], rec.timestamp, start[ev.step_key][1])
    return out


def _steps(instance, run_id: str) -> tuple[dict[str, float], dict[int, list[str]]]:
    """Wall time of each step (STEP_START -> end) and the steps each process ran."""
    walls, by_pid = {}, {}
    for key, (t0, t1, pid) in step_spans(instance, run_id).items():
        walls[key] = t1 - t0
        by_pid.setdefault(pid, []).append(key)
    return walls, by_pid


def _records(log: Path) -> dict[int, dict]:
    return {rec["pid"]: rec for rec in (json.loads(f.read_text()) for f in log.glob("*.json"))}


def report(instance, runs, log: Path, probe_video) -> None:
    from hvbench_assets.testkit.decode_counter import DecodeCounts

    time.sleep(1.0)  # step processes write their records as they end
    recs = _records(log)
    print("\nper step: video frames decoded of the run's input / frames in it; wall / input duration; peak RSS")
    print(f"{'run':48} {'step':22} {'decoded/frames':>15} {'other files':>11} {'wall/dur':>9} {'peak RSS':>9}")
    for label, run_id, path, before, after in runs:
        info = probe_video(path, count_frames=True)
        frames, dur = info.frame_count, info.duration_s
        real = os.path.realpath(path)
        walls, by_pid = _steps(instance, run_id)
        total = other_total = 0
        rows = [(steps, DecodeCounts({(p, k): n for p, k, n in recs[pid]["counts"]}), recs[pid]["maxrss_kb"])
                for pid, steps in by_pid.items() if pid in recs and pid != os.getpid()]
        in_process = after.copy()
        in_process.subtract(before)
        if sum(in_process.values()):
            rows.append((by_pid.get(os.getpid(), ["(in this process)"]), in_process,
                         resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
        for steps, counts, rss_kb in sorted(rows, key=lambda r: r[0]):
            mine = counts.video(real)
            other = counts.video() - mine
            total, other_total = total + mine, other_total + other
            wall = sum(walls.get(s, 0.0) for s in steps)
            print(f"{label:48} {','.join(steps)[:22]:22} {mine / frames:15.2f} {other:11d} "
                  f"{wall / dur if wall else float('nan'):9.2f} {rss_kb / 1e6:8.2f}G")
        run = instance.get_run_stats(run_id)
        print(f"{label:48} {'= whole run':22} {total / frames:15.2f} {other_total:11d} "
              f"{(run.end_time - run.start_time) / dur:9.2f} {'':>9}   ({frames} frames, {dur:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
