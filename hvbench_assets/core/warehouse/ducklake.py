"""DuckLake backend of the warehouse: catalog in Postgres, Parquet data files on shared storage.

Chosen by a location string `ducklake:postgres:<libpq conninfo>` (for example
`ducklake:postgres:dbname=hvbench host=db.lab user=hv`). The folder for the Parquet files is needed only
when the catalog is created (DuckLake stores it in the catalog); it comes from `data_path` or
HVBENCH_WAREHOUSE_DATA_PATH. Several processes on several hosts write at once: DuckLake commits
optimistically, and the Warehouse retries a conflicting transaction with bounded back-off.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

PREFIX = "ducklake:postgres:"
ALIAS = "hvbench"  # the attached catalog; also what current_database() answers


def is_ducklake(location: str | os.PathLike) -> bool:
    return str(location).startswith(PREFIX)


@dataclass(frozen=True)
class DuckLakeLocation:
    conninfo: str
    data_path: str | None

    @classmethod
    def parse(cls, location: str | os.PathLike, data_path: str | os.PathLike | None = None) -> "DuckLakeLocation":
        conninfo = str(location)[len(PREFIX):].strip()
        if not conninfo:
            raise ValueError(f"warehouse location {str(location)!r}: no Postgres conninfo after {PREFIX!r}")
        return cls(conninfo, str(data_path) if data_path else None)

    @property
    def location(self) -> str:
        return PREFIX + self.conninfo

    def attach_sql(self, alias: str = ALIAS) -> str:
        options = ""
        if self.data_path:
            folder = self.data_path.rstrip("/") + "/"
            if "://" not in folder:  # a local or mounted folder; object storage URLs are left to DuckDB
                Path(folder).mkdir(parents=True, exist_ok=True)
            options = f" (DATA_PATH {_quote(folder)})"
        return f"ATTACH {_quote('ducklake:postgres:' + self.conninfo)} AS {alias}{options}"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def extension_directory() -> str | None:
    """The extensions shipped by the duckdb-ext-ducklake / duckdb-ext-postgres wheels (offline, for
    exactly the pinned duckdb); None when they are not installed, so DuckDB fetches its own."""
    try:
        import duckdb_ext  # namespace package of those wheels
    except ImportError:
        return None
    for base in getattr(duckdb_ext, "__path__", []):
        folder = Path(base) / "extensions"
        if folder.is_dir():
            return str(folder)
    return None


def load_extensions(con: duckdb.DuckDBPyConnection) -> None:
    """Loads ducklake and postgres into `con`, from the wheels' folder when present."""
    folder = extension_directory()
    if folder:
        con.execute(f"SET extension_directory = {_quote(folder)}")
    try:
        con.execute("LOAD ducklake")
        con.execute("LOAD postgres")
    except duckdb.Error as exc:
        raise RuntimeError(
            f"cannot load DuckDB's ducklake/postgres extensions for duckdb {duckdb.__version__} ({exc}); "
            "install the versions in constraints.txt (scripts/setup.sh does)") from exc


class CatalogUnreachable(Exception):
    """The Postgres server could not be reached for a lock (the catalog's own errors are duckdb.Error)."""


class Catalog:
    """One attached DuckLake per process; every Warehouse call takes a cursor of it (its own transaction)."""

    LOCK_WAIT_S = 900  # how long a writer waits for another's exclusive read-then-write before failing

    def __init__(self, where: DuckLakeLocation):
        self.where = where
        self._con: duckdb.DuckDBPyConnection | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._locker = None  # a psycopg2 session that holds advisory locks (see exclusive)
        self._locker_pid = 0
        self._locker_mutex = threading.Lock()
        _open_catalogs.add(self)

    @contextlib.contextmanager
    def exclusive(self, names: Iterable[str]) -> Iterator[None]:
        """Holds Postgres advisory locks on the tables `names` (in sorted order, so writers never deadlock)
        while a read-then-write transaction runs and commits. DuckLake 1.4's commit check misses some
        concurrent delete+insert pairs on a Postgres catalog (duckdb/ducklake#1094, #1393): four processes
        incrementing one counter lost an increment. Plain replaces of disjoint partitions do not take it."""
        import psycopg2  # DuckLake writers only (the scale extra's Dagster storage needs it too)
        from psycopg2 import errors as pg_errors

        names = sorted(set(names))
        with self._locker_mutex:  # one session per Catalog: threads of this process queue here
            try:
                if self._locker is None or self._locker_pid != os.getpid() or self._locker.closed:
                    self._locker = psycopg2.connect(self.where.conninfo)
                    self._locker.autocommit = True
                    self._locker_pid = os.getpid()
                    with self._locker.cursor() as cur:
                        cur.execute(f"SET lock_timeout = '{self.LOCK_WAIT_S}s'")
                with self._locker.cursor() as cur:
                    for name in names:
                        cur.execute("SELECT pg_advisory_lock(hashtext(%s))", ("hvbench:" + name,))
            except pg_errors.LockNotAvailable as exc:
                self._drop_locker()
                raise RuntimeError(f"{self.where.location}: waited {self.LOCK_WAIT_S}s for another writer of "
                                   f"{names}: {exc}") from exc
            except psycopg2.OperationalError as exc:
                self._drop_locker()
                raise CatalogUnreachable(f"could not connect to Postgres for a lock: {exc}") from exc
            try:
                yield
            finally:
                try:
                    with self._locker.cursor() as cur:
                        cur.execute("SELECT pg_advisory_unlock_all()")
                except psycopg2.Error:
                    self._drop_locker()  # a closed session has released its locks

    def _drop_locker(self) -> None:
        if self._locker is not None and self._locker_pid == os.getpid():
            try:
                self._locker.close()
            except Exception:  # already broken
                pass
        self._locker = None

    def cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            if self._con is None or self._pid != os.getpid():  # a forked child attaches anew
                self._con = self._attach()
                self._pid = os.getpid()
            cur = self._con.cursor()
        cur.execute(f"USE {ALIAS}")
        return cur

    def attached(self) -> bool:
        """This process holds the attached catalog (a DuckDB instance with the postgres extension's threads)."""
        return self._con is not None and self._pid == os.getpid()

    def reset(self) -> None:
        """Drops the attached catalog after a connection failure, so the next call reconnects."""
        with self._lock:
            if self._con is not None and self._pid == os.getpid():
                try:
                    self._con.close()
                except duckdb.Error:
                    pass
            self._con = None
        with self._locker_mutex:
            self._drop_locker()

    def _attach(self) -> duckdb.DuckDBPyConnection:
        folder = extension_directory()
        config: dict = {"python_enable_replacements": False}  # see store._Instance.attach
        if folder:
            config["autoinstall_known_extensions"] = False
            config["extension_directory"] = folder
        con = duckdb.connect(":memory:", config=config)
        try:
            load_extensions(con)
            con.execute(self.where.attach_sql())
        except BaseException:
            con.close()
            raise
        return con


_open_catalogs: "weakref.WeakSet[Catalog]" = weakref.WeakSet()


def fork_safe() -> bool:
    """Whether this process may fork a child that uses the warehouse: not while it holds an attached DuckLake
    catalog. A child forked from such a process crashed with SIGSEGV on its first warehouse call (a clip run's
    forked `transcript` on the Ray cluster): the DuckDB instance it inherits has lost its threads."""
    return not any(c.attached() for c in list(_open_catalogs))


@atexit.register
def _close_catalogs() -> None:
    """Closes attached catalogs in the main thread before the interpreter tears down; a DuckDB instance
    with the postgres extension destroyed later (by the garbage collector at shutdown) aborts the process."""
    for catalog in list(_open_catalogs):
        catalog.reset()


def is_conflict(exc: BaseException) -> bool:
    """A commit that lost the optimistic race against another writer: retrying is correct."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.TransactionException) or "conflict" in text


def is_unreachable(exc: BaseException) -> bool:
    """The Postgres catalog cannot be reached (down, restarting, network): waiting may help."""
    if isinstance(exc, CatalogUnreachable):
        return True
    text = str(exc).lower()
    return any(s in text for s in (
        "unable to connect to postgres", "could not connect", "connection refused", "server closed the connection",
        "terminating connection", ".s.pgsql", "connection to server", "the database system is",
        "failed to execute query", "ssl syscall", "connection not open", "broken pipe",
    ))
