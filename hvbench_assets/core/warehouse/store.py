"""Warehouse: explicit table specs and whole-partition replacement, on a DuckDB file or a DuckLake.

DuckDB allows one writing process per database file. Dagster's multiprocess executor and concurrent
runs open the file from many processes, so every access takes an exclusive advisory file lock
(`<db>.lock`) first and holds the file only for the statement batch: it is attached to the process's one
in-memory DuckDB instance and detached again. The file is never kept open between calls; that also lets the
UI, a notebook or the CLI read between writes.

A location `ducklake:postgres:<conninfo>` selects the DuckLake backend instead (see ducklake.py): no file
lock, the same SQL, and transactions that lose DuckLake's optimistic commit race are retried.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import itertools
import json
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from hvbench_assets.core.warehouse import ducklake, grouped

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


class _Instance:
    """The process's one in-memory DuckDB instance, to which each call attaches the warehouse file. Creating
    an instance per call (`duckdb.connect(file)`) cost 40 ms more than ATTACH + DETACH (64 vs 21 ms here),
    ~200 times in a clip's job. A forked child makes its own and never touches (or frees) its parent's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None
        self._inherited: list[duckdb.DuckDBPyConnection] = []
        self._aliases = itertools.count()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._lock = threading.Lock()  # another thread of the parent may have held it
        if self._con is not None:
            self._inherited.append(self._con)  # its threads did not survive the fork: never close it
            self._con = None

    def attach(self, path: Path) -> tuple[duckdb.DuckDBPyConnection, str]:
        """A connection whose default database is `path`, and its alias (for detach)."""
        with self._lock:
            if self._con is None:
                # no replacement scans: a table missing from the file must be an error, never a Python variable of
                # that name found in the caller's frames (`annotations`, from `from __future__ import annotations`)
                con = duckdb.connect(":memory:", config={"python_enable_replacements": False})
                # Detaching would fold the WAL into the file at every close, reads included. Only a commit that
                # takes the WAL past WAL_LIMIT folds it; readers of the file see it all either way.
                con.execute("PRAGMA disable_checkpoint_on_shutdown")
                con.execute(f"SET checkpoint_threshold = '{Warehouse.WAL_LIMIT}'")
                # the format files created from here on get (see Warehouse.STORAGE_VERSION)
                con.execute(f"SET storage_compatibility_version = '{Warehouse.STORAGE_VERSION}'")
                # an in-memory instance would spill into ./.tmp of whatever folder the user started from
                con.execute(f"SET temp_directory = {ducklake._quote(os.path.join(tempfile.gettempdir(), 'hvbench-duckdb'))}")
                self._con = con
            alias = f"hvbench_{os.getpid()}_{next(self._aliases)}"
            cur = self._con.cursor()
        try:
            cur.execute(f"ATTACH {ducklake._quote(str(path))} AS {alias}")
            cur.execute(f"USE {alias}")
        except BaseException:
            cur.close()
            with contextlib.suppress(duckdb.Error):  # an attached file would stay locked by this process
                self._con.cursor().execute(f"DETACH DATABASE IF EXISTS {alias}")
            raise
        return cur, alias

    def detach(self, con: duckdb.DuckDBPyConnection, alias: str) -> None:
        con.close()  # rolls back whatever a failed call left open
        with self._lock:
            cur = self._con.cursor()
        try:
            cur.execute(f"DETACH {alias}")
        finally:
            cur.close()


_INSTANCE = _Instance()


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
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()  # TIMESTAMP holds UTC
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _unnest_column(i: int, col_type: str) -> str:
    """Column `i` of the JSON document `j` (a list of columns) as rows of `col_type`. JSON columns arrive as
    the strings `_encode` made, so their text is stored exactly as written."""
    if col_type.upper() == "JSON":
        return f"UNNEST(CAST(j->{i} AS VARCHAR[]))::JSON"
    return f"UNNEST(CAST(j->{i} AS {col_type}[]))"


def _key_set(spec: TableSpec, keys: list[list[Any]]) -> tuple[str, str]:
    """`(key columns) IN (the given key values)` as SQL with one JSON parameter, and that parameter."""
    types = dict(spec.all_columns)
    cols = ", ".join(f'"{k}"' for k in spec.key)
    unnest = ", ".join(_unnest_column(i, types[k]) for i, k in enumerate(spec.key))
    doc = json.dumps([list(col) for col in zip(*keys)], default=_json_default, ensure_ascii=False)
    return f"({cols}) IN (SELECT {unnest} FROM (SELECT ?::JSON AS j))", doc


def decode_json(spec: TableSpec, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`spec`'s JSON columns of raw query rows decoded in place (DuckDB returns them as strings)."""
    cols = [n for n, t in spec.all_columns if t.upper() == "JSON"]
    for row in rows:
        for c in cols:
            if isinstance(row.get(c), str):
                row[c] = json.loads(row[c])
    return rows


class Warehouse:
    """Small facade over one DuckDB file. Safe across threads, processes and concurrent runs."""

    INSERT_CHUNK = 50_000

    MAX_CONFLICT_RETRIES = 30  # DuckLake: attempts after a lost commit race, with growing random back-off
    # DuckDB file: the WAL is folded into the file at the commit that takes it past this size (see _Instance). Every
    # opening replays the WAL, ~3 ms more for even a few KB of a job's writes, and a batch of 8 short clips opens
    # the file ~700 times: folding at every commit (a few ms per write) took 0.88x the CPU inside openings of a
    # 32 KB limit, 0.68x with STORAGE_VERSION too (benchmarks/warehouse_openings.py; docs/performance.md)
    WAL_LIMIT = "0KB"
    # DuckDB's default format (v1.0.0+) stores each column's distinct-count sketch in a legacy layout rebuilt at
    # every attach (most of a clean attach's CPU); files of this version store the compact one and attach in a
    # third of the time. Older files keep their format until `hvbench warehouse upgrade` (upgrade_storage).
    STORAGE_VERSION = "v1.2.0"

    def __init__(self, path: str | os.PathLike, lock_timeout_s: float = 900.0,
                 data_path: str | os.PathLike | None = None, catalog_wait_s: float | None = None):
        """`path`: a DuckDB file, or `ducklake:postgres:<conninfo>` (then `data_path` names the Parquet folder
        when the catalog is new; settings_table.open_warehouse passes HVBENCH_WAREHOUSE_DATA_PATH).
        `catalog_wait_s`: how long DuckLake calls wait for an unreachable Postgres catalog before failing
        (default 120 s; HVBENCH_WAREHOUSE_WAIT_S through settings_table.open_warehouse)."""
        self.lock_timeout_s = lock_timeout_s
        self._ensured: set[str] = set()
        self._held: dict[int, duckdb.DuckDBPyConnection] = {}  # thread id -> the connection of its batch()
        self.conflicts = 0  # DuckLake commits retried after a conflict (by this object)
        self._catalog: ducklake.Catalog | None = None
        if ducklake.is_ducklake(path):
            where = ducklake.DuckLakeLocation.parse(path, data_path)
            self._catalog = ducklake.Catalog(where)
            self.path: Path | str = where.location
            self.catalog_wait_s = float(catalog_wait_s if catalog_wait_s is not None else 120.0)
        else:
            self.path = Path(path)

    @property
    def backend(self) -> str:
        return "ducklake" if self._catalog is not None else "duckdb"

    # -- connections -------------------------------------------------------------------------
    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """DuckDB file: an exclusive connection; the file lock serialises hvbench processes, the retry loop
        covers other programs (a DuckDB CLI) that hold the database briefly. DuckLake: a connection of
        its own (own transaction) on the attached catalog; writers do not wait for each other. Writes this
        thread holds (grouped.py) are committed first."""
        self._commit_if_held()
        with self._connection() as con:
            yield con

    def commit_held(self) -> None:
        """Commits the writes this thread holds for this warehouse now (grouped.py): before an effect that needs
        them committed, e.g. deleting the files the replaced rows named."""
        self._commit_if_held()

    def _commit_if_held(self, sql: str | None = None) -> None:
        """Commits this thread's held writes (grouped.py) to this warehouse if `sql` may read them (None: any)."""
        group = grouped.current()
        if group is not None and group.touches(self, sql):
            group.flush(self)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._catalog is not None:
            cur = self._catalog.cursor()
            try:
                yield cur
            finally:
                cur.close()
            return
        held = self._held.get(threading.get_ident())
        if held is not None:
            yield held
            return
        with self._file_lock() as deadline:
            con, alias = self._open(deadline)
            try:
                yield con
            finally:
                _INSTANCE.detach(con, alias)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Calls of this thread inside share one connection, opened once under the file lock: for a few quick
        reads in a row (a task loading its labels makes 10-20 calls, and each opening attaches the file).
        Other processes wait meanwhile, so never hold it across slow work. DuckLake: no effect."""
        key = threading.get_ident()
        if self._catalog is not None or key in self._held:
            yield
            return
        with self._file_lock() as deadline:
            self._held[key], alias = self._open(deadline)
            try:
                yield
            finally:
                _INSTANCE.detach(self._held.pop(key), alias)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[float]:
        """Holds `<db>.lock` exclusively (DuckDB file only); yields the deadline for opening the file."""
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
                yield deadline
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def attached(self, con: duckdb.DuckDBPyConnection, alias: str) -> Iterator[None]:
        """This warehouse attached as `alias` inside another warehouse's connection (read-only for a DuckDB
        file, whose lock is held meanwhile); used to copy between backends."""
        if self._catalog is not None:
            ducklake.load_extensions(con)
            con.execute(self._catalog.where.attach_sql(alias))
            lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        else:
            if not self.path.exists():
                raise WarehouseError(f"warehouse {self.path}: no such file")
            lock = self._file_lock()
        with lock:
            if self._catalog is None:
                con.execute(f"ATTACH {ducklake._quote(str(self.path))} AS {alias} (READ_ONLY)")
            try:
                yield
            finally:
                con.execute(f"DETACH {alias}")

    def transaction(self, work: Callable[[], Any]) -> Any:
        """For code that opens `connect()` and commits by itself: runs `work` once on the DuckDB file, and on
        DuckLake again after a lost commit race or while the catalog is unreachable. `work` must be safe to
        run again from the start (it re-reads what it depends on)."""
        return self._retrying(work)

    def _retrying(self, work: Callable[[], Any]) -> Any:
        """Runs `work` (one whole transaction) again when DuckLake reports a commit conflict (bounded,
        random growing back-off) or its Postgres catalog is unreachable (until `catalog_wait_s`). A
        failed attempt committed nothing, so running it again is safe. The DuckDB file runs it once."""
        if self._catalog is None:
            return work()
        conflicts, delay = 0, 0.02
        deadline = time.monotonic() + self.catalog_wait_s
        while True:
            try:
                return work()
            except (duckdb.Error, ducklake.CatalogUnreachable) as exc:
                if ducklake.is_unreachable(exc):
                    self._catalog.reset()
                    if time.monotonic() > deadline:
                        raise WarehouseError(
                            f"warehouse {self.path}: Postgres catalog unreachable for {self.catalog_wait_s:.0f}s, "
                            f"nothing was written: {exc}") from exc
                    time.sleep(0.5)
                    continue
                if not ducklake.is_conflict(exc):
                    raise
                conflicts += 1
                self.conflicts += 1
                if conflicts > self.MAX_CONFLICT_RETRIES:
                    raise WarehouseError(
                        f"warehouse {self.path}: still conflicting after {conflicts - 1} retries: {exc}") from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)

    def checkpoint(self) -> None:
        """Folds the DuckDB file's WAL into it (see _Instance), e.g. before copying the `.duckdb` file alone."""
        if self._catalog is None:
            with self.connect() as con:
                con.execute("CHECKPOINT")

    def storage_format(self) -> str | None:
        """The DuckDB file's storage version as DuckDB names it (`v1.0.0+`, `v1.2.0+`); None on DuckLake."""
        if self._catalog is not None:
            return None
        rows = self.query("SELECT tags['storage_version'] AS v FROM duckdb_databases() WHERE database_name = "
                          "current_database()")
        return rows[0]["v"] if rows else None

    def storage_current(self) -> bool:
        """Whether the file is in STORAGE_VERSION's format or newer (always True on DuckLake)."""
        found = self.storage_format()
        return found is None or _version_key(found) >= _version_key(self.STORAGE_VERSION)

    def upgrade_storage(self) -> tuple[str | None, str | None]:
        """Rewrites an older DuckDB file in STORAGE_VERSION's format (tables and rows unchanged); returns the
        format before and after. The file lock is held throughout, so hvbench processes wait; the copy is
        written beside the file and renamed over it only when complete. Nothing to do on DuckLake."""
        before = self.storage_format()
        if before is None or self.storage_current():
            return before, before
        new = self.path.with_name(self.path.name + ".upgrade")
        with self._file_lock() as deadline:
            con, alias = self._open(deadline)
            try:
                con.execute("CHECKPOINT")  # the WAL belongs to the old file: fold it in first
            finally:
                _INSTANCE.detach(con, alias)
            for leftover in (new, new.with_name(new.name + ".wal")):
                leftover.unlink(missing_ok=True)
            con = duckdb.connect(":memory:")
            try:
                con.execute(f"ATTACH {ducklake._quote(str(self.path))} AS old_file (READ_ONLY)")
                con.execute(f"ATTACH {ducklake._quote(str(new))} AS new_file "
                            f"(STORAGE_VERSION '{self.STORAGE_VERSION}')")
                con.execute("COPY FROM DATABASE old_file TO new_file")
                con.execute("CHECKPOINT new_file")
            except duckdb.Error as exc:
                con.close()
                new.unlink(missing_ok=True)
                raise WarehouseError(f"warehouse {self.path}: upgrade failed, the file is unchanged: {exc}") from exc
            con.close()
            os.replace(new, self.path)
        return before, self.storage_format()

    def _open(self, deadline: float) -> tuple[duckdb.DuckDBPyConnection, str]:
        delay = 0.05
        while True:
            try:
                return _INSTANCE.attach(self.path)
            except duckdb.IOException as exc:
                if not _is_lock_error(exc) or time.monotonic() > deadline:
                    raise WarehouseError(f"warehouse {self.path}: {exc}") from exc
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    # -- schema ------------------------------------------------------------------------------
    def ensure(self, *specs: TableSpec) -> None:
        # once per table: replace_many passes its spec once per batch (3,000 CREATE + ALTER checks took 44 s)
        todo = list({s.name: s for s in specs if s.name not in self._ensured}.values())
        if not todo:
            return
        def create() -> None:
            with self.connect() as con:
                for spec in todo:
                    con.execute(spec.ddl())
                    self._add_missing_columns(con, spec)

        self._retrying(create)  # DuckLake: two processes creating one table conflict; the retry sees it
        self._ensured.update(s.name for s in todo)

    @staticmethod
    def _add_missing_columns(con: duckdb.DuckDBPyConnection, spec: TableSpec) -> None:
        existing = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND table_catalog = current_database()", [spec.name]
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
        group = grouped.current()
        if group is not None:
            return group.hold(self, items)
        return self._commit_held(list(items))

    def _commit_held(self, items: list) -> int:
        return self._replace([spec for spec, *_ in items], lambda con: items, exclusive=False)

    def read_then_replace(
        self,
        specs: Sequence[TableSpec],
        build: Callable[[duckdb.DuckDBPyConnection], Iterable[tuple[TableSpec, Mapping[str, Any],
                                                                    Iterable[Mapping[str, Any]], Mapping[str, Any] | None]]],
    ) -> int:
        """Like `replace_tables`, but `build(con)` first reads what the write depends on (for example how
        often each answer letter is used so far), under the same lock and in the same transaction, so no
        other writer slips in between. `specs` lists every table `build` may write. On DuckLake a commit
        conflict runs `build` again on fresh data, so it must only read and return rows (no other effects).
        On DuckLake, read-then-writes of the same tables take turns (see Catalog.exclusive)."""
        group = grouped.current()
        held, put_back = group.take(self) if group is not None else ([], None)
        if held:  # this thread's held writes commit first in the same transaction, and `build` reads them
            try:
                count = self._replace([*specs, *(spec for spec, *_ in held)], build, exclusive=True, first=held)
                group.commits += 1
                return count
            except Exception:  # noqa: BLE001 - the held writes alone (each clip's apart if need be), then this one
                put_back()
                group.flush(self)
        return self._replace(specs, build, exclusive=True)

    def _replace(self, specs, build, exclusive: bool, first: list | None = None) -> int:
        """`first`: replaces applied in the same transaction before `build` reads (held writes, grouped.py)."""
        for attempt in (1, 2):
            self.ensure(*specs)

            def transaction() -> int:
                turn = (self._catalog.exclusive(s.name for s in specs) if exclusive and self._catalog is not None
                        else contextlib.nullcontext())
                with turn, self._connection() as con:
                    con.execute("BEGIN TRANSACTION")
                    try:
                        for spec, keys, values in self._plan(first or []).values():
                            self._apply(con, spec, keys, values)
                        plans = self._plan(build(con))
                        for spec, keys, values in plans.values():
                            self._apply(con, spec, keys, values)
                        con.execute("COMMIT")
                    except Exception:
                        _rollback(con)
                        raise
                return sum(len(v) for _, _, v in plans.values())

            try:
                return self._retrying(transaction)
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
        # One statement per chunk whose single parameter is a JSON document of the columns. DuckDB's Python
        # client converts list parameters value by value and tries `import pandas` twice per value (pandas is
        # not installed: each try searches sys.path); 1,100 rows took 2.2 s that way and take 0.12 s as JSON
        # (benchmarks/warehouse_writes.py).
        select = ", ".join(_unnest_column(i, types[n]) for i, n in enumerate(names))
        insert = f'INSERT INTO "{spec.name}" ({collist}) SELECT {select} FROM (SELECT ?::JSON AS j)'
        if len(keys) == 1:
            con.execute(f'DELETE FROM "{spec.name}" WHERE {where}', keys[0])
        elif keys:  # one set-based DELETE: a statement per key made 10,000 replaced rows 10,000 calls
            among, doc = _key_set(spec, keys)
            con.execute(f'DELETE FROM "{spec.name}" WHERE {among}', [doc])
        for start in range(0, len(values), self.INSERT_CHUNK):
            chunk = values[start : start + self.INSERT_CHUNK]
            doc = json.dumps([list(col) for col in zip(*chunk)], default=_json_default, ensure_ascii=False)
            con.execute(insert, [doc])

    def forget_video(self, video_id: str) -> list[str]:
        """Delete one clip's rows from every table that has a `video_id` column, in one transaction
        (a clip that no longer exists after its raw video was re-split). Returns the tables touched."""
        tables = [r["table_name"] for r in self.query(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'video_id' "
            "AND table_catalog = current_database()")]

        def transaction() -> None:
            with self.connect() as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    for t in tables:
                        con.execute(f'DELETE FROM "{t}" WHERE video_id = ?', [video_id])
                    con.execute("COMMIT")
                except Exception:
                    _rollback(con)
                    raise

        self._retrying(transaction)
        return tables

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        def run() -> None:
            with self.connect() as con:
                con.execute(sql, list(params))

        self._retrying(run)

    # -- reads -------------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self._commit_if_held(sql)

        def run() -> list[dict[str, Any]]:
            with self._connection() as con:
                return _dict_rows(con, sql, params)

        return self._retrying(run)

    def rows(self, spec: TableSpec, order_by: str | None = None, **where: Any) -> list[dict[str, Any]]:
        """Rows of `spec` matching equality filters; [] when the table does not exist yet."""
        clause = " AND ".join(f'"{k}" = ?' for k in where) or "TRUE"
        order = f" ORDER BY {order_by}" if order_by else ""
        found = self._if_table(spec.name, f'SELECT * FROM "{spec.name}" WHERE {clause}{order}', list(where.values()))
        return decode_json(spec, found or [])

    def has_table(self, name: str) -> bool:
        return self._if_table(name, f'SELECT 1 FROM "{name}" LIMIT 0') is not None

    def _if_table(self, name: str, sql: str, params: Sequence[Any] = (),
                  commit_held: bool = True) -> list[dict[str, Any]] | None:
        """`sql`'s rows when table `name` exists, else None: in one opening of the file (opening it is most of a
        small read's cost; a clip's labels made ~700 such checks). The query itself finds a missing table: asking
        duckdb_tables() first cost more than the read (0.76 vs 0.58 ms), for tables that nearly always exist."""
        if commit_held:
            self._commit_if_held(sql)

        def run() -> list[dict[str, Any]] | None:
            with self._connection() as con:
                try:
                    return _dict_rows(con, sql, params)
                except duckdb.CatalogException as exc:
                    if _missing_table(exc, name):
                        return None
                    raise

        return self._retrying(run)

    def table_names(self) -> list[str]:
        """Every table of this warehouse (not DuckLake's own catalog tables), sorted."""
        self._commit_if_held()  # a held write may create one
        return [r["table_name"] for r in self.query(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
            "AND table_schema = 'main' ORDER BY 1")]

    def count(self, spec: TableSpec, **where: Any) -> int:
        """Rows of `spec` matching equality filters, counting the writes this thread holds (grouped.py) as made,
        without committing them (a batch step's metadata counts its table after each clip)."""
        clause = " AND ".join(f'"{k}" = ?' for k in where) or "TRUE"
        group = grouped.current()
        held = group.held_rows(self, spec.name) if group is not None else []
        params, pending = list(where.values()), 0
        if held:  # the committed rows outside the held keys, plus the held rows
            among, doc = _key_set(spec, [[kv[k] for k in spec.key] for kv, _ in held])
            clause += f" AND NOT COALESCE({among}, FALSE)"
            params.append(doc)
            pending = sum(all({**row, **kv}.get(k) == v for k, v in where.items()) for kv, rows in held for row in rows)
        found = self._if_table(spec.name, f'SELECT count(*) AS n FROM "{spec.name}" WHERE {clause}', params,
                               commit_held=False)
        return (int(found[0]["n"]) if found else 0) + pending


def _dict_rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description] if cur.description else []
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _missing_table(exc: duckdb.CatalogException, name: str) -> bool:
    """DuckDB's error for a table that does not exist (not for a missing column or function)."""
    return f"Table with name {name} does not exist" in str(exc)


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK after a failure; a connection the failure already ended (lost catalog) has none to undo."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def _version_key(version: str) -> tuple[int, ...]:
    """`v1.2.0+` -> (1, 2, 0)."""
    return tuple(int(p) for p in version.strip("v+").split(".") if p.isdigit())
