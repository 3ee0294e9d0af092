"""Copy every table of one warehouse into another (DuckDB file <-> DuckLake), e.g. to move a project that
outgrew one host onto a shared catalog, or to take a DuckLake snapshot back to a laptop."""

from __future__ import annotations

from hvbench_assets.core.warehouse.store import Warehouse, WarehouseError

SOURCE = "hvbench_copy_source"


def copy_warehouse(source: Warehouse, target: Warehouse, replace: bool = False) -> dict[str, int]:
    """Copies all tables of `source` into `target` as one transaction: column types and rows as they are.
    Tables the target already has are replaced only with `replace=True` (else nothing is written).
    Returns rows per table."""
    tables = source.table_names()
    if not tables:
        raise WarehouseError(f"warehouse {source.path}: no tables to copy")
    clash = sorted(set(tables) & set(target.table_names()))
    if clash and not replace:
        raise WarehouseError(f"warehouse {target.path} already has {len(clash)} of these tables "
                             f"({', '.join(clash[:5])}{', ...' if len(clash) > 5 else ''}); "
                             "pass replace=True (--replace) to overwrite them")

    def transaction() -> dict[str, int]:
        counts: dict[str, int] = {}
        with target.connect() as con, source.attached(con, SOURCE):
            con.execute("BEGIN TRANSACTION")
            try:
                for t in tables:
                    con.execute(f'DROP TABLE IF EXISTS "{t}"')
                    con.execute(f'CREATE TABLE "{t}" AS SELECT * FROM {SOURCE}.main."{t}"')
                    counts[t] = con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                con.execute("COMMIT")
            except Exception:
                con.execute("ROLLBACK")
                raise
        return counts

    counts = target._retrying(transaction)
    target._ensured.clear()  # tables were recreated: check columns again on the next write
    return counts
