"""What a warehouse opening costs inside a real job: the DuckDB file's storage format and WAL policy compared.

Every warehouse call attaches the DuckDB file and detaches it again (other processes must be able to open it in
between), so a batch of 8 short clips opens it ~700 times. An opening reads the catalog and replays the WAL:
- DuckDB's default storage format (`v1.0.0+`) stores each column's distinct-count sketch in a legacy layout that
  is rebuilt register by register at every attach (most of a clean attach's CPU in `perf`); files created with
  `STORAGE_VERSION 'v1.2.0'` store the compact sketch;
- a WAL is replayed at every attach, at a cost that grows with the tables and transactions in it.

Short clips (cut out of the shared clips as in short_clip_backfill.py) are ingested once; then
`clip_offline_labels_job` runs over all of them in this process (in-process executor) once per variant and
round, interleaved, each time on a copy of the ingested warehouse converted to the variant's format and with
the variant's WAL limit. Per variant it prints the openings, the CPU seconds spent inside them (attach,
statements, detach: the calling thread's CPU), the CPU per opening, and the whole run's CPU, as ratios of the
baseline (the format and WAL limit hvbench used before 2026-11-26: `v1.0.0+`, 32 KB; now `v1.2.0`, 0).

Run: PYTHONPATH=. .venv/bin/python benchmarks/warehouse_openings.py [--lengths 2 3 4 5] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clip_job import SHARED, _fresh_media, ingest  # noqa: E402
from decodes import setup as decode_setup  # noqa: E402
from short_clip_backfill import SOURCES, make_clips  # noqa: E402

# (name, storage version of the file, WAL limit); the first is the baseline
VARIANTS = (("v1.0.0+ wal 32KB", "v1.0.0", "32KB"), ("v1.0.0+ wal 0", "v1.0.0", "0KB"),
            ("v1.2.0 wal 32KB", "v1.2.0", "32KB"), ("v1.2.0 wal 0", "v1.2.0", "0KB"))


def convert(src: Path, dst: Path, version: str) -> None:
    """`dst`: `src`'s tables in a file of the given storage version (the WAL folded in first)."""
    import duckdb

    for p in (dst, dst.with_name(dst.name + ".wal")):
        p.unlink(missing_ok=True)
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{src}' AS s (READ_ONLY)")
    con.execute(f"ATTACH '{dst}' AS d (STORAGE_VERSION '{version}')")
    con.execute("COPY FROM DATABASE s TO d")
    con.execute("CHECKPOINT d")
    con.close()


class OpeningMeter:
    """Counts warehouse openings and the calling thread's CPU inside them (Warehouse.connect and batch)."""

    def __init__(self):
        import contextlib
        import threading

        from hvbench_assets.core.warehouse import store

        self.n, self.cpu = 0, 0.0
        meter = self

        def timed(orig):
            @contextlib.contextmanager
            def wrapper(self_wh, *a, **kw):
                outer = not self_wh._held.get(threading.get_ident())
                t0 = time.thread_time()
                with orig(self_wh, *a, **kw) as v:
                    yield v
                if outer:
                    meter.n += 1
                    meter.cpu += time.thread_time() - t0
            return wrapper

        # the `with` body counts too: the statements (and a commit's checkpoint) run in it
        store.Warehouse.connect = timed(store.Warehouse.connect)
        store.Warehouse.batch = timed(store.Warehouse.batch)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", nargs="*", type=float, default=[2.0, 3.0, 4.0, 5.0, 6.0, 2.5, 3.5, 4.5])
    ap.add_argument("--repeat", type=int, default=2, help="rounds of all variants, interleaved")
    args = ap.parse_args()
    if not all((SHARED / f"{s}.mp4").exists() for s in SOURCES):
        print(f"shared clips missing in {SHARED}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="hvbench_openings_"))
    decode_setup(tmp)
    os.environ["HVBENCH_MIN_MOTION"] = "0"
    import dagster as dg

    from hvbench_assets.core.warehouse import store
    from hvbench_assets.demo.main import clip_offline_labels_job

    try:
        durations = ingest(make_clips(args.lengths, tmp / "generated"))
        instance = dg.DagsterInstance.get()
        keys = [k for k in instance.get_dynamic_partitions("videos") if k in durations]
        db = tmp / "data" / "hvbench.duckdb"
        store.Warehouse(db).checkpoint()
        ingested = tmp / "ingested.duckdb"
        shutil.copy(db, ingested)
        meter = OpeningMeter()
        results: dict[str, list[tuple[int, float, float]]] = {name: [] for name, _, _ in VARIANTS}
        tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
        print(f"{len(keys)} clips, {sum(durations.values()):.1f} s of video; {os.cpu_count()} cores")
        for round_ in range(args.repeat):
            for name, version, wal in VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]:
                _fresh_media(tmp)
                convert(ingested, db, version)
                store.Warehouse.WAL_LIMIT = wal
                if store._INSTANCE._con is not None:
                    store._INSTANCE._con.execute(f"SET checkpoint_threshold = '{wal}'")
                meter.n, meter.cpu = 0, 0.0
                c0 = time.process_time()
                res = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance, tags=tags,
                                     run_config={"execution": {"config": {"in_process": {}}}})
                cpu = time.process_time() - c0
                results[name].append((meter.n, meter.cpu, cpu))
                print(f"  {name:18s} {'ok' if res.success else 'FAILED'}: {meter.n} openings, {meter.cpu:5.2f} CPU-s "
                      f"in them ({meter.cpu / max(1, meter.n) * 1000:.2f} ms each), run {cpu:5.1f} CPU-s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = results[VARIANTS[0][0]]
    b_open, b_run = sum(r[1] for r in base), sum(r[2] for r in base)
    print("\nvariant            openings  ms/opening  CPU in openings / baseline  run CPU / baseline")
    for name, rs in results.items():
        n, o, c = (sum(r[i] for r in rs) for i in range(3))
        print(f"{name:18s} {n / len(rs):8.0f}  {o / n * 1000:10.2f}  {o / b_open:26.2f}  {c / b_run:18.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
