"""`hvbench warehouse info|copy|upgrade`: which backend a warehouse location is, its tables, copying all tables
between a DuckDB file and a DuckLake (catalog in Postgres), and rewriting an older DuckDB file in the current
storage format."""

from __future__ import annotations

import argparse
import sys

from hvbench_assets.cli.common import command


LOCATION_HELP = "a DuckDB file or ducklake:postgres:<conninfo> (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)"


def _args(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser("info", help="backend, tables and row counts, package versions")
    info.add_argument("location", nargs="?", default=None, help=LOCATION_HELP)
    upgrade = actions.add_parser("upgrade", help="rewrite an older DuckDB file in the current storage format "
                                 "(an attach costs a third; stop runs and the UI first)")
    upgrade.add_argument("location", nargs="?", default=None, help=LOCATION_HELP)
    copy = actions.add_parser("copy", help="copy every table from one warehouse into another (DuckDB <-> DuckLake)")
    copy.add_argument("source", help="warehouse to read (DuckDB file or ducklake:postgres:<conninfo>)")
    copy.add_argument("target", help="warehouse to write (DuckDB file or ducklake:postgres:<conninfo>)")
    copy.add_argument("--data-path", default=None,
                      help="folder (or bucket URL) for a new DuckLake's Parquet files (default: HVBENCH_WAREHOUSE_DATA_PATH)")
    copy.add_argument("--replace", action="store_true", help="overwrite tables the target already has")


@command("warehouse", "warehouse backends: `info` (tables, versions), `copy SRC DST` (DuckDB <-> DuckLake), "
         "`upgrade` (storage format)", _args)
def _run(args: argparse.Namespace) -> int:
    from hvbench_assets.core.environment import package_versions
    from hvbench_assets.core.warehouse import WarehouseError
    from hvbench_assets.core.warehouse.copy import copy_warehouse
    from hvbench_assets.settings_table import open_warehouse

    try:
        if args.action in ("info", "upgrade"):
            wh = open_warehouse(args.location)
            if wh.backend == "duckdb" and not wh.path.exists():
                print(f"no warehouse at {wh.path} (set HVBENCH_WAREHOUSE or pass a location)", file=sys.stderr)
                return 1
            if args.action == "upgrade":
                return _upgrade(wh)
            fmt = wh.storage_format()
            print(f"warehouse: {wh.path} ({wh.backend}" + (f", storage format {fmt}" if fmt else "") + ")")
            if not wh.storage_current():
                print(f"  older than {wh.STORAGE_VERSION}: each attach of the file costs about 3x; "
                      "`hvbench warehouse upgrade` rewrites it (stop runs first)")
            for t in wh.table_names():
                n = wh.query(f'SELECT count(*) AS n FROM "{t}"')[0]["n"]
                print(f"  {t:32s} {n:>10,d} rows")
            print("versions: " + ", ".join(f"{k} {v}" for k, v in package_versions().items()))
            return 0
        source = open_warehouse(args.source)
        target = open_warehouse(args.target, data_path=args.data_path)
        counts = copy_warehouse(source, target, replace=args.replace)
    except WarehouseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for t, n in counts.items():
        print(f"  {t:32s} {n:>10,d} rows")
    print(f"copied {len(counts)} tables ({sum(counts.values()):,d} rows) from {source.path} to {target.path}")
    return 0


def _upgrade(wh) -> int:
    if wh.backend != "duckdb":
        print(f"{wh.path}: a DuckLake has no DuckDB file format to upgrade")
        return 0
    before, after = wh.upgrade_storage()
    if before == after:
        print(f"{wh.path}: storage format {before} is current, nothing to do")
    else:
        print(f"{wh.path}: storage format {before} -> {after} ({len(wh.table_names())} tables, rows unchanged)")
    return 0
