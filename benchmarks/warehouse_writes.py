"""Warehouse write speed: Warehouse.replace (columnar UNNEST insert under the file lock) against a plain
DuckDB executemany of the same rows, in the same process.  Usage: python benchmarks/warehouse_writes.py [rows]"""

import sys
import tempfile
import time
from pathlib import Path

import duckdb

from hvbench_assets.core.warehouse import TableSpec, Warehouse

SPEC = TableSpec("boxes", (("video_id", "VARCHAR"), ("track_id", "INTEGER"), ("frame", "INTEGER"),
                           ("x1", "DOUBLE"), ("y1", "DOUBLE"), ("x2", "DOUBLE"), ("y2", "DOUBLE"), ("source", "VARCHAR")))


def main(n: int) -> None:
    rows = [{"track_id": i % 4, "frame": i, "x1": 1.0, "y1": 2.0, "x2": 30.0, "y2": 40.0, "source": "detected"}
            for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "plain.duckdb"))
        con.execute(SPEC.ddl())
        names = SPEC.column_names
        values = [[r.get(c, "v" if c == "video_id" else None) for c in names] for r in rows]
        t0 = time.perf_counter()
        con.executemany(f"INSERT INTO boxes VALUES ({', '.join('?' for _ in names)})", values)
        baseline = time.perf_counter() - t0
        con.close()
        wh = Warehouse(Path(tmp) / "wh.duckdb")
        wh.ensure(SPEC)
        t0 = time.perf_counter()
        wh.replace(SPEC, {"video_id": "v"}, rows, provenance={"backend": "bench"})
        ours = time.perf_counter() - t0
    print(f"rows: {n}")
    print(f"plain executemany: {baseline:.3f} s")
    print(f"Warehouse.replace: {ours:.3f} s  (ratio to baseline {ours / baseline:.3f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
