"""A backfill of short clips (2-6 s) through the daemon: one run per clip against several clips per run.

Clips of 2-6 s are cut with ffmpeg out of the shared clips (real faces and speech; a different window per
clip), ingested in this process (inbox sensor + `scene_clips`), and then labelled by `clip_offline_labels_job`
through a temporary instance with the project's `dagster.yaml`, a code server and a `dagster-daemon` (run queue of
2 runs, launcher), as in benchmarks/clip_job.py. Each variant submits all its runs at once, as a backfill
or a clip_sensor tick does:

- `per-clip`: one run per clip (what a backfill did before key ranges: the baseline);
- `batch N`: runs over key ranges of at most N clips (runtime/batch.py; what BackfillPolicy.multi_run(N) and
  clip_sensor's batches launch);
- `batch N unsplit` (`--unsplit`): the same runs tagged `hvbench/split=off`, so L1 and L7 keep all their clips in
  one process (no helper);
- `UI backfill` (`--ui-backfill`): a backfill of the job over all the clips launched as its page's "Launch backfill"
  does (GraphQL); the daemon's backfill loop makes its runs as the job's BackfillPolicy says (runtime/batch.py,
  `HVBENCH_BACKFILL_CLIPS_PER_RUN`). Its wall counts from its first run's creation; the delay before it (the
  daemon looks at new backfills every 30 s) is printed apart.

Per variant it prints the wall (first submission -> last run finished) ÷ the clips' total duration (for batches also
the chain of their longest run: to L1, L1, to L7's frame scores, L7's frame scores, after them), the CPU
seconds of all the instance's processes, and frames of each clip decoded ÷ frames in the clip, counted by a
`sitecustomize` hook around PyAV in every process the daemon starts (benchmarks/decodes.py's, plus the steps
the executor forks). A clip is decoded once for its labels (L1) and once more for each question video with
drawn boxes (see docs/performance.md), so the per-clip figures are compared variant against variant. Variants are interleaved over `--repeat` rounds, each on fresh media folders, so load from other
processes hits all alike (odd rounds run them in reverse order); the last lines give each variant's wall as a ratio of the per-clip run's.

`--steps`: where a batch's CPU goes instead; each batch size's runs execute one after the other in this process
(no daemon), and every run prints its steps' wall and CPU seconds, as `clip_job.py --steps` does for one clip.

Run: PYTHONPATH=. .venv/bin/python benchmarks/short_clip_backfill.py [--lengths 2 3 4 5 6 2.5 3.5 4.5]
     [--batch 4 --batch 8] [--repeat 1] [--unsplit] [--face-detector yuface] [--ui-backfill] [--timeline] [--steps]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clip_job import (JOB, SHARED, CodeServer, Daemon, StepSampler, Submitter, _fresh_media, host_reference, ingest,  # noqa: E402
                      run_stats, teardown, wait_for)
from decodes import SITECUSTOMIZE, step_spans  # noqa: E402
from decodes import setup as decode_setup  # noqa: E402

# the executor's forked steps (os.fork, left with os._exit) count their own decodes too
FORK_HOOK = '''
if os.environ.get("HVBENCH_DECODE_LOG"):
    def _child():
        _counts.clear()
        _t0[0] = time.time()

    os.register_at_fork(after_in_child=_child)
    _os_exit = os._exit

    def _exit(code):
        try:
            _dump()
        finally:
            _os_exit(code)

    os._exit = _exit
'''

ROOT = Path(__file__).resolve().parents[1]
UI_BACKFILL = "UI backfill"
SOURCES = ("two_people_talking", "man_talking_head", "two_children", "five_people_grid")
LENGTHS = (2.0, 3.0, 4.0, 5.0, 6.0, 2.5, 3.5, 4.5)


def make_clips(lengths: list[float], out: Path) -> list[Path]:
    """One clip per length, each a different window of a shared clip at least that long."""
    from hvbench_assets.core.media import cut_clip, probe_video

    durations = {s: probe_video(SHARED / f"{s}.mp4").duration_s for s in SOURCES}
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i, length in enumerate(lengths):
        fits = [s for s in SOURCES if durations[s] >= length + 0.1]
        src = fits[i % len(fits)]
        room = durations[src] - length - 0.05
        start = round((i * 1.3) % room, 2) if room > 0 else 0.0
        files.append(cut_clip(SHARED / f"{src}.mp4", out / f"short_{i:02d}_{src}.mp4", start, start + length))
    return files


def _decodes(log: Path) -> dict[str, int]:
    """Video frames decoded per file by every process that has exited since the log was cleared."""
    out: dict[str, int] = {}
    for f in log.glob("*.json"):
        for path, kind, n in json.loads(f.read_text())["counts"]:
            if kind == "video":
                out[os.path.realpath(path)] = out.get(os.path.realpath(path), 0) + n
    return out


def ui_backfill(submitter, instance, keys: list[str]) -> tuple[list[str], float]:
    """A backfill of the job over the clips, launched as the job page's "Launch backfill" does (GraphQL), its runs
    made by the daemon's backfill loop (the job's BackfillPolicy, HVBENCH_BACKFILL_CLIPS_PER_RUN); their ids once they
    cover every clip, and the seconds from the launch to the first run's creation (the daemon looks at new
    backfills every 30 s)."""
    import dagster as dg

    from hvbench_assets.testkit.ui_backfill import launch_backfill

    t0 = time.time()
    backfill_id = launch_backfill(submitter.workspace, keys, job=JOB)
    order = {k: i for i, k in enumerate(keys)}
    while True:
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        covered = sum(order[r.tags["dagster/asset_partition_range_end"]] - order[r.tags["dagster/asset_partition_range_start"]] + 1
                      if "dagster/asset_partition_range_end" in r.tags else 1 for r in runs)
        if covered >= len(keys):
            first = min(instance.get_run_record_by_id(r.run_id).create_timestamp.timestamp() for r in runs)
            return [r.run_id for r in runs], first - t0
        time.sleep(0.2)


def run_variant(name: str, batch: int | None, keys: list[str], instance, submitter, daemon, tmp: Path,
                log: Path, split: bool = True, run_config: dict | None = None) -> dict:
    _fresh_media(tmp)
    for f in log.glob("*.json"):
        f.unlink()
    chunks = [keys[i:i + (batch or 1)] for i in range(0, len(keys), batch or 1)]
    from hvbench_assets.runtime.batch import SPLIT_TAG

    tag = {"dagster/backfill": f"bench{int(time.time() * 1000)}", **({} if split else {SPLIT_TAG: "off"})}
    t0 = time.time()
    pickup = None
    if name == UI_BACKFILL:
        rids, pickup = ui_backfill(submitter, instance, keys)
        t0 += pickup  # its wall counts from its first run's creation, as the others' from their submission
    else:
        rids = [submitter.submit(c[0], run_config or {}, tag, last_key=c[-1] if len(c) > 1 else None) for c in chunks]
    m = wait_for(instance, rids, daemon)
    stats = [run_stats(instance, r) for r in rids]
    wall = max(s["end"] for s in stats) - t0
    time.sleep(1.0)  # run workers write their decode records as they exit
    longest = max(rids, key=lambda r: stats[rids.index(r)]["end"])
    return {"name": name, "runs": len(rids), "wall": wall, "pickup": pickup, "cpu": m["cpu_s"], "roots_cpu": m["roots_cpu_s"],
            "pss": m["peak_pss_mb"],
            "decoded": _decodes(log), "phases": critical_path(instance, longest), "timeline": timeline(instance, longest)}


def timeline(instance, run_id: str) -> list[str]:
    """The run's steps in start order: seconds from the run's start to each step's start and end, and its process."""
    start = next((rec.timestamp for rec in instance.all_logs(run_id) if rec.dagster_event
                  and rec.dagster_event.event_type_value == "PIPELINE_START"), None)
    if start is None:
        return []
    spans = sorted(step_spans(instance, run_id).items(), key=lambda kv: kv[1][0])
    return [f"{t0 - start:6.1f} -> {t1 - start:6.1f} s  pid {pid}  {key}" for key, (t0, t1, pid) in spans]


def critical_path(instance, run_id: str) -> dict[str, float] | None:
    """Seconds of the run's chain: its start to L1, L1, L1's end to L7's scores, L7's scores, and after them to the
    run's end (from the run's step events)."""
    steps: dict[str, list[float]] = {}
    start = end = None
    for rec in instance.all_logs(run_id):
        ev = rec.dagster_event
        if ev is None:
            continue
        if ev.event_type_value == "PIPELINE_START":
            start = rec.timestamp
        elif ev.event_type_value == "PIPELINE_SUCCESS":
            end = rec.timestamp
        elif ev.event_type_value in ("STEP_START", "STEP_SUCCESS") and ev.step_key:
            steps.setdefault(ev.step_key, []).append(rec.timestamp)
    l1, l7 = steps.get("human_tracks", []), steps.get("speaker_frame_scores", [])
    if start is None or end is None or len(l1) != 2 or len(l7) != 2:
        return None
    return {"to L1": l1[0] - start, "L1": l1[1] - l1[0], "L1 to L7": l7[0] - l1[1], "L7 scores": l7[1] - l7[0],
            "after": end - l7[1]}


def step_profile(instance, keys: list[str], total: float, variants, tmp: Path, keep: bool) -> int:
    """Each variant's runs one after the other in this process, per step wall and CPU (clip_job.py --steps)."""
    sampler = StepSampler()
    try:
        for name, batch in variants:
            _fresh_media(tmp)
            wall = 0.0
            for i in range(0, len(keys), batch):
                chunk = keys[i:i + batch]
                tags = {"dagster/asset_partition_range_start": chunk[0], "dagster/asset_partition_range_end": chunk[-1]}
                wall += sampler.run(instance, tags, {}, f"{name}: {chunk[0]} .. {chunk[-1]}", total * len(chunk) / len(keys))
            print(f"{name}: runs one after the other, wall {wall:.1f} s = {wall / total:.2f}x the clips' duration")
    finally:
        sampler.done.set()
        instance.dispose()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", nargs="*", type=float, default=list(LENGTHS), help="clip lengths in seconds")
    ap.add_argument("--batch", type=int, action="append", default=[], help="clips per run (repeatable); default 4 and 8")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of all variants, interleaved")
    ap.add_argument("--keep", action="store_true", help="keep the temporary instance folder")
    ap.add_argument("--unsplit", action="store_true",
                    help="also each batch size with its runs tagged hvbench/split=off (no helper processes)")
    ap.add_argument("--ui-backfill", action="store_true",
                    help="also a backfill of the job launched as from its page, its runs made by the daemon")
    ap.add_argument("--face-detector", action="append", default=[],
                    help="also each batch size with this offline L1 face detector (run config), e.g. yuface")
    ap.add_argument("--timeline", action="store_true",
                    help="also print each batch variant's longest run step by step (start, end, process)")
    ap.add_argument("--steps", action="store_true",
                    help="only where the CPU goes: each batch size's runs in this process, step by step")
    args = ap.parse_args()
    if not all((SHARED / f"{s}.mp4").exists() for s in SOURCES):
        print(f"shared clips missing in {SHARED}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="hvbench_shortclips_"))
    log = decode_setup(tmp)  # instance, data folder and the decode hook (PYTHONPATH) for every process
    (tmp / "hook" / "sitecustomize.py").write_text(SITECUSTOMIZE + FORK_HOOK)
    os.environ["HVBENCH_MIN_MOTION"] = "0"
    workspace = tmp / "workspace.yaml"
    workspace.write_text("load_from:\n  - python_module:\n      module_name: hvbench_assets.definitions\n"
                         f"      working_directory: {ROOT}\n")
    import dagster as dg

    from hvbench_assets.core.media.paths import resolve
    from hvbench_assets.core.warehouse import Warehouse

    print(f"instance {tmp}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    ref_clip = SHARED / "man_talking_head.mp4"
    ref = host_reference(ref_clip)
    print(f"host reference: plain decode of {ref_clip.name} (PyAV, one thread) {ref:.2f} s")
    files = make_clips(args.lengths, tmp / "generated")
    durations = ingest(files)
    instance = dg.DagsterInstance.get()
    keys = [k for k in instance.get_dynamic_partitions("videos") if k in durations]  # the partitions' order
    total = sum(durations[k] for k in keys)
    wh = Warehouse(tmp / "data" / "hvbench.duckdb")
    print(f"{len(keys)} clips, {total:.1f} s of video: " + ", ".join(f"{durations[k]:.1f}" for k in keys))
    variants = [("per-clip", None, True, {})] + [(f"batch {n}", n, True, {}) for n in (args.batch or [4, 8])]
    variants += [(f"batch {n} unsplit", n, False, {}) for n in (args.batch or [4, 8]) if args.unsplit]
    variants += [(f"batch {n} {d}", n, True, {"resources": {"vision": {"config": {"face_detector": d}}}})
                 for d in args.face_detector for n in (args.batch or [4, 8])]
    variants += [(UI_BACKFILL, 0, True, {})] if args.ui_backfill else []
    if args.steps:
        return step_profile(instance, keys, total, [v[:2] for v in variants if v[1]], tmp, args.keep)
    code_server = CodeServer(workspace, tmp / "code_server.log")
    submitter = Submitter(instance, workspace)
    submitter.stop_sensors()
    daemon = Daemon(workspace, tmp / "daemon.log", code_server)
    results: dict[str, list[dict]] = {name: [] for name, *_ in variants}
    try:
        for round_ in range(args.repeat):
            for name, batch, split, config in variants if round_ % 2 == 0 else variants[::-1]:  # odd rounds backwards
                r = run_variant(name, batch, keys, instance, submitter, daemon, tmp, log, split, config)
                results[name].append(r)
                frames = {os.path.realpath(resolve(row["path"])): row["frame_count"]
                          for row in wh.query("SELECT path, frame_count FROM video_probe WHERE status = 'ok'")}
                per_clip = [r["decoded"].get(p, 0) / n for p, n in frames.items()]
                r["per_clip"] = {Path(p).stem: round(r["decoded"].get(p, 0) / n, 2) for p, n in frames.items()}
                print(f"{name:16s} {r['runs']:2d} runs  wall {r['wall']:6.1f} s = {r['wall'] / total:5.2f}x the clips' "
                      f"duration  CPU {r['cpu']:6.1f} s (daemon and code server {r['roots_cpu']:.1f} s besides)  peak PSS {r['pss']:5.0f} MB  frames decoded / frames per clip "
                      f"{min(per_clip):.2f}-{max(per_clip):.2f}  load {os.getloadavg()[0]:.1f}", flush=True)
                if r["pickup"] is not None:
                    print(f"  the daemon made its first run {r['pickup']:.1f} s after the launch (not in the wall)",
                          flush=True)
                if batch is not None and r["runs"] < len(keys) and r["phases"]:
                    print("  its longest run: " + ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items()), flush=True)
                if args.timeline and batch is not None:
                    print("\n".join("    " + line for line in r["timeline"]), flush=True)
    finally:
        teardown(submitter, instance, daemon, tmp, args.keep)
    base = sum(r["wall"] for r in results["per-clip"])
    base_cpu = sum(r["cpu"] for r in results["per-clip"])
    print(f"\nclips: {len(keys)}, {total:.1f} s of video; host reference {host_reference(ref_clip):.2f} s now "
          f"({ref:.2f} s at the start)")
    print("frames decoded / frames in the clip, per clip (last round): " + "; ".join(
        f"{name}: " + " ".join(f"{v:.2f}" for _, v in sorted(rs[-1]["per_clip"].items())) for name, rs in results.items()))
    for name, rs in results.items():
        wall = sum(r["wall"] for r in rs)
        cpu = sum(r["cpu"] for r in rs)
        print(f"{name:16s} wall / duration {wall / len(rs) / total:.2f}  wall / per-clip runs' wall {wall / base:.2f}  "
              f"CPU / per-clip runs' CPU {cpu / base_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
