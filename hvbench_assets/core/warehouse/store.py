"""DuckDB warehouse: explicit table specs and whole-partition replacement.

DuckDB allows one writing process per database file. Dagster's multiprocess executor and concurrent
runs open the file from many processes, so every access takes an exclusive advisory file lock
(`<db>.lock`) first and holds the DuckDB connection only for the statement batch. Connections are
never kept open between calls; that also lets the UI, a notebook or the CLI read between writes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

PROVENANCE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("backend", "VARCHAR"),
    ("model", "VARCHAR"),
    ("code_version", "VARCHAR"),
    ("materialized_at", "TIMESTAMP"),
)


class WarehouseError(RuntimeError):
    pass


@dataclass(frozen=True)
class TableSpec:
    """One warehouse table. `key` names the columns whose values a write replaces as a unit."""

    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...] = ("video_id",)
    provenance: bool = True
    description: str = ""
    all_columns: tuple[tuple[str, str], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cols = tuple(self.columns) + (PROVENANCE_COLUMNS if self.provenance else ())
        names = [c for c, _ in cols]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names {names}")
        missing = [k for k in self.key if k not in names]
        if missing:
            raise ValueError(f"table {self.name}: key columns {missing} are not columns")
        object.__setattr__(self, "all_columns", cols)

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.all_columns]

    def ddl(self) -> str:
        cols = ", ".join(f'"{c}" {t}' for c, t in self.all_columns)
        return f'CREATE TABLE IF NOT EXISTS "{self.name}" ({cols})'


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("could not set" in text or "conflicting" in text)


def _encode(value: Any, col_type: str) -> Any:
    if value is None:
        return None
    if col_type.upper() == "JSON":
        return json.dumps(value, default=_json_default, ensure_ascii=False)
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        return value.item()  # numpy scalar
    if hasattr(value, "tolist"):
        return value.tolist()  # numpy array into a LIST column
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class Warehouse:
    """Small facade over one DuckDB file. Safe across threads, processes and concurrent runs."""

    INSERT_CHUNK = 50_000

    def __init__(self, path: str | os.PathLike, lock_timeout_s: float = 900.0):
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s
        self._ensured: set[str] = set()

    # -- connections -------------------------------------------------------------------------
    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """An exclusive connection; the file lock serialises hvbench processes, the retry loop
        covers other programs (a DuckDB CLI) that hold the database briefly."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        deadline = time.monotonic() + self.lock_timeout_s
        with open(lock_path, "a+") as lock_file:
            while True:
                try:
                    fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise WarehouseError(
                            f"warehouse {self.path}: waited {self.lock_timeout_s:.0f}s for the write lock"
                        ) from None
                    time.sleep(0.02 + random.random() * 0.05)
            try:
                con = self._open(deadline)
                try:
                    yield con
                finally:
                    con.close()
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _open(self, deadline: float) -> duckdb.DuckDBPyConnection:
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path))
            except duckdb.IOException as exc:
                if not _is_lock_error(exc) or time.monotonic() > deadline:
                    raise WarehouseError(f"warehouse {self.path}: {exc}") from exc
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    # -- schema ------------------------------------------------------------------------------
    def ensure(self, *specs: TableSpec) -> None:
        todo = [s for s in specs if s.name not in self._ensured]
        if not todo:
            return
        with self.connect() as con:
            for spec in todo:
                con.execute(spec.ddl())
                self._add_missing_columns(con, spec)
                self._ensured.add(spec.name)

    @staticmethod
    def _add_missing_columns(con: duckdb.DuckDBPyConnection, spec: TableSpec) -> None:
        existing = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [spec.name]
        ).fetchall()}
        for name, col_type in spec.all_columns:
            if name not in existing:
                con.execute(f'ALTER TABLE "{spec.name}" ADD COLUMN "{name}" {col_type}')

    # -- writes ------------------------------------------------------------------------------
    def replace(
        self,
        spec: TableSpec,
        key_values: Mapping[str, Any],
        rows: Iterable[Mapping[str, Any]],
        provenance: Mapping[str, Any] | None = None,
    ) -> int:
        """Delete every row matching `key_values` (the spec's key columns) and insert `rows`,
        in one transaction. Rows get `key_values` and `provenance` filled in where absent."""
        return self.replace_many(spec, [(key_values, rows)], provenance)

    def replace_many(
        self,
        spec: TableSpec,
        batches: Iterable[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]],
        provenance: Mapping[str, Any] | None = None,
    ) -> int:
        """Several `replace` calls (key values, rows) in one transaction: one lock, one connection."""
        return self.replace_tables([(spec, key_values, rows, provenance) for key_values, rows in batches])

    def replace_tables(
        self,
        items: Iterable[tuple[TableSpec, Mapping[str, Any], Iterable[Mapping[str, Any]], Mapping[str, Any] | None]],
    ) -> int:
        """Replaces in several tables (spec, key values, rows, provenance) as ONE transaction, so a reader
        never sees one table of a label updated and its companion table not yet."""
        items = list(items)
        return self.read_then_replace([spec for spec, *_ in items], lambda con: items)

    def read_then_replace(
        self,
        specs: Sequence[TableSpec],
        build: Callable[[duckdb.DuckDBPyConnection], Iterable[tuple[TableSpec, Mapping[str, Any],
                                                                    Iterable[Mapping[str, Any]], Mapping[str, Any] | None]]],
    ) -> int:
        """Like `replace_tables`, but `build(con)` first reads what the write depends on (for example how
        often each answer letter is used so far), under the same lock and in the same transaction, so no
        other writer slips in between. `specs` lists every table `build` may write."""
        for attempt in (1, 2):
            self.ensure(*specs)
            try:
                with self.connect() as con:
                    con.execute("BEGIN TRANSACTION")
                    try:
                        plans = self._plan(build(con))
                        for spec, keys, values in plans.values():
                            self._apply(con, spec, keys, values)
                        con.execute("COMMIT")
                    except Exception:
                        con.execute("ROLLBACK")
                        raise
                return sum(len(v) for _, _, v in plans.values())
            except duckdb.CatalogException:
                if attempt == 2:
                    raise
                self._ensured.clear()  # the file was replaced under us (data folder wiped): create again
        raise AssertionError("unreachable")

    def _plan(self, items) -> dict[str, tuple[TableSpec, list[list[Any]], list[list[Any]]]]:
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        plans: dict[str, tuple[TableSpec, list[list[Any]], list[list[Any]]]] = {}
        for spec, key_values, rows, provenance in items:
            if set(key_values) != set(spec.key):
                raise WarehouseError(f"{spec.name}: replace needs key columns {spec.key}, got {sorted(key_values)}")
            fill = dict(provenance or {})
            if spec.provenance:
                fill.setdefault("materialized_at", now)
            names, types = spec.column_names, dict(spec.all_columns)
            _, keys, values = plans.setdefault(spec.name, (spec, [], []))
            keys.append([key_values[k] for k in spec.key])
            for row in rows:
                unknown = set(row) - set(names)
                if unknown:
                    raise WarehouseError(f"{spec.name}: unknown columns {sorted(unknown)}")
                merged = {**fill, **row, **key_values}  # the partition key always wins
                values.append([_encode(merged.get(n), types[n]) for n in names])
        return plans

    def _apply(self, con, spec: TableSpec, keys: list[list[Any]], values: list[list[Any]]) -> None:
        names, types = spec.column_names, dict(spec.all_columns)
        where = " AND ".join(f'"{k}" = ?' for k in spec.key)
        collist = ", ".join(f'"{n}"' for n in names)
        # one columnar statement per chunk: ~30x faster than executemany for frame-level tables
        select = ", ".join(f"UNNEST(?::{types[n]}[])" for n in names)
        insert = f'INSERT INTO "{spec.name}" ({collist}) SELECT {select}'
        for key in keys:
            con.execute(f'DELETE FROM "{spec.name}" WHERE {where}', key)
        for start in range(0, len(values), self.INSERT_CHUNK):
            chunk = values[start : start + self.INSERT_CHUNK]
            con.execute(insert, [list(col) for col in zip(*chunk)])

    def forget_video(self, video_id: str) -> list[str]:
        """Delete one clip's rows from every table that has a `video_id` column, in one transaction
        (a clip that no longer exists after its raw video was re-split). Returns the tables touched."""
        tables = [r["table_name"] for r in self.query(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'video_id'")]
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            for t in tables:
                con.execute(f'DELETE FROM "{t}" WHERE video_id = ?', [video_id])
            con.execute("COMMIT")
        return tables

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self.connect() as con:
            con.execute(sql, list(params))

    # -- reads -------------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.connect() as con:
            cur = con.execute(sql, list(params))
            cols = [d[0] for d in cur.description] if cur.description else []
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def rows(self, spec: TableSpec, order_by: str | None = None, **where: Any) -> list[dict[str, Any]]:
        """Rows of `spec` matching equality filters; [] when the table does not exist yet."""
        if not self.has_table(spec.name):
            return []
        clause = " AND ".join(f'"{k}" = ?' for k in where) or "TRUE"
        order = f" ORDER BY {order_by}" if order_by else ""
        out = self.query(f'SELECT * FROM "{spec.name}" WHERE {clause}{order}', list(where.values()))
        json_cols = [n for n, t in spec.all_columns if t.upper() == "JSON"]
        for row in out:
            for c in json_cols:
                if isinstance(row.get(c), str):
                    row[c] = json.loads(row[c])
        return out

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [name]))

    def count(self, spec: TableSpec, **where: Any) -> int:
        if not self.has_table(spec.name):
            return 0
        clause = " AND ".join(f'"{k}" = ?' for k in where) or "TRUE"
        return int(self.query(f'SELECT count(*) AS n FROM "{spec.name}" WHERE {clause}', list(where.values()))[0]["n"])
