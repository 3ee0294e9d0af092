"""Warehouse write speed: Warehouse.replace (one JSON document of columns per insert, under the file lock) against
two baselines on the same rows in the same process: a plain DuckDB executemany, and one UNNEST insert with a
list parameter per column (how Warehouse wrote before 2026-11-24; DuckDB's Python client converts those lists
value by value and tries `import pandas` twice per value).
Usage: python benchmarks/warehouse_writes.py [rows ...]   (default: 1100, about L1's box rows of a 22 s clip, and 20000)"""

import sys
import tempfile
import time
from pathlib import Path

import duckdb

from hvbench_assets.core.warehouse import TableSpec, Warehouse

SPEC = TableSpec("boxes", (("video_id", "VARCHAR"), ("track_id", "INTEGER"), ("frame", "INTEGER"),
                           ("x1", "DOUBLE"), ("y1", "DOUBLE"), ("x2", "DOUBLE"), ("y2", "DOUBLE"), ("source", "VARCHAR")))


def main(n: int) -> None:
    rows = [{"track_id": i % 4, "frame": i, "x1": 1.0 + i, "y1": 2.0, "x2": 30.0, "y2": 40.5, "source": "detected"}
            for i in range(n)]
    names, types = SPEC.column_names, dict(SPEC.all_columns)
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "plain.duckdb"))
        con.execute(SPEC.ddl())
        values = [[r.get(c, "v" if c == "video_id" else None) for c in names] for r in rows]
        t0 = time.perf_counter()
        con.executemany(f"INSERT INTO boxes VALUES ({', '.join('?' for _ in names)})", values)
        baseline = time.perf_counter() - t0
        con.execute("DELETE FROM boxes")
        select = ", ".join(f"UNNEST(?::{types[c]}[])" for c in names)
        t0 = time.perf_counter()
        con.execute(f"INSERT INTO boxes SELECT {select}", [list(col) for col in zip(*values)])
        lists = time.perf_counter() - t0
        con.close()
        wh = Warehouse(Path(tmp) / "wh.duckdb")
        wh.ensure(SPEC)
        t0 = time.perf_counter()
        wh.replace(SPEC, {"video_id": "v"}, rows, provenance={"backend": "bench"})
        ours = time.perf_counter() - t0
    print(f"rows: {n}")
    print(f"  plain executemany:        {baseline:7.3f} s")
    print(f"  UNNEST of list parameters: {lists:7.3f} s  (ratio to executemany {lists / baseline:.3f})")
    print(f"  Warehouse.replace (JSON): {ours:7.3f} s  (ratio to executemany {ours / baseline:.3f}, "
          f"to list parameters {ours / lists:.3f})")


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [1100, 20_000]:
        main(n)
