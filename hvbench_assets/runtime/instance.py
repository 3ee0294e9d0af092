"""The project's Dagster instance: Dagster's SQLite storage, with the event log keeping its connections open.

Dagster's SQLite event log creates a SQLAlchemy engine, connects, and disposes it again for every event it
stores and every read. SQLAlchemy's compiled-statement cache lives on the engine, so every statement is
compiled again, and the tables are inspected anew per event. A short-clip batch run stores ~730 events and
opens ~5,000 such connections. benchmarks/event_log.py: 0.27x the CPU per event (13 -> 3.6 ms) in a run, 0.17x
per latest-materialization read.
`PooledSqliteEventLogStorage` keeps one engine per database file and process instead, with the same files,
tables and locking: Dagster already serializes a process's access to its event log (`_db_lock`), and SQLite
locks per transaction, so other processes (daemon, webserver, forked steps) see every commit as before.

`HvbenchInstance` makes it the default storage of an instance whose dagster.yaml names no `storage`
(dagster_home/dagster.yaml sets `instance_class`); an instance with Postgres or its own storage is unchanged.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any

import dagster as dg
import yaml

from hvbench_assets import settings_table
from hvbench_assets.runtime import run_workers
from hvbench_assets.runtime.dagster_private import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    ConfigurableClassData,
    DagsterSqliteStorage,
    InstanceRef,
    SqliteEventLogStorage,
    SqliteRunStorage,
    SqliteScheduleStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

OPEN_SHARDS = 8  # run databases kept open per process besides the index (a daemon reads many runs in turn)


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage with one open engine per database file (the index, the last few runs) per process."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, tuple[Any, int]] = OrderedDict()  # shard -> (engine, file's inode)
        self._pid = os.getpid()
        self._inherited: list[OrderedDict] = []  # a forked child's copy of its parent's engines: never used nor closed
        self._schema: set[str] = set()  # tables and columns seen present (a migration only ever adds them)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: dict) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str):
        """The shard's open engine; a new one after a fork or when the file was removed or replaced."""
        if os.getpid() != self._pid:  # closing the parent's connections here would touch its open files
            self._inherited.append(self._engines)
            self._engines, self._pid = OrderedDict(), os.getpid()
        path = self.path_for_shard(shard)
        try:
            inode = os.stat(path).st_ino
        except FileNotFoundError:
            inode = -1
        cached = self._engines.get(shard)
        if cached is not None:
            if cached[1] == inode:
                self._engines.move_to_end(shard)
                return cached[0]
            self._drop(shard)
        engine = create_engine(self.conn_string_for_shard(shard), poolclass=StaticPool,
                               connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
        if shard not in self._initialized_dbs:
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        self._engines[shard] = (engine, os.stat(path).st_ino if os.path.exists(path) else -1)
        runs = [s for s in self._engines if s != INDEX_SHARD_NAME]
        for old in runs[:-OPEN_SHARDS]:
            self._drop(old)
        return engine

    def _drop(self, shard: str) -> None:
        engine, _ = self._engines.pop(shard)
        engine.dispose()
        self._initialized_dbs.discard(shard)  # a removed file is created again on the next connection

    @contextmanager
    def _connect(self, shard: str):
        with self._db_lock:  # one connection per file: the lock already makes this process's access serial
            with self._engine(shard).connect() as conn:
                with conn.begin():
                    yield conn

    def has_table(self, table_name: str) -> bool:
        if f"table:{table_name}" in self._schema:
            return True
        found = super().has_table(table_name)
        if found:
            self._schema.add(f"table:{table_name}")
        return found

    def _has_asset_key_col_on_connection(self, conn, column_name: str) -> bool:
        if f"asset_keys:{column_name}" in self._schema:
            return True
        found = super()._has_asset_key_col_on_connection(conn, column_name)
        if found:
            self._schema.add(f"asset_keys:{column_name}")
        return found

    def _close_all(self) -> None:
        with self._db_lock:
            if os.getpid() == self._pid:
                for shard in list(self._engines):
                    self._drop(shard)

    def wipe(self) -> None:
        self._close_all()  # the run files are deleted
        super().wipe()

    def dispose(self) -> None:
        self._close_all()
        super().dispose()


class PooledSqliteStorage(DagsterSqliteStorage):
    """Dagster's SQLite storage (same files) with the pooled event log."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self.base_dir = base_dir
        self._run_storage = SqliteRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = PooledSqliteEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = SqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: dict) -> PooledSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)

    @property
    def event_storage_data(self) -> ConfigurableClassData:
        return ConfigurableClassData(__name__, PooledSqliteEventLogStorage.__name__,
                                     yaml.dump({"base_dir": _event_logs_directory(self.base_dir)}))


# Dagster's backfill daemon looks for new backfills every 30 s (DEFAULT_DAEMON_INTERVAL_SECONDS, read as its loop
# starts, after the daemon created its instance): a backfill of 8 short clips waited 5.7-11.4 s for its first run,
# against ~24 s for all its labels. An idle look is a few queries of the run storage.
BACKFILL_LOOP_S = 5


class HvbenchInstance(dg.DagsterInstance):
    """A DagsterInstance whose default storage (no `storage` in dagster.yaml) is `PooledSqliteStorage`, whose
    daemon looks for new backfills every BACKFILL_LOOP_S seconds, and whose code server forks run workers from a
    preloaded process (run_workers.py)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from hvbench_assets.runtime.dagster_private import daemon_controller as controller

        controller.DEFAULT_DAEMON_INTERVAL_SECONDS = min(controller.DEFAULT_DAEMON_INTERVAL_SECONDS, BACKFILL_LOOP_S)
        # in a code server (which creates its instance before loading the definitions): run workers forked from a
        # preloaded process (run_workers.py); elsewhere this does nothing
        run_workers.install(settings_table.value("HVBENCH_RUN_WORKERS"))

    @classmethod
    def config_schema(cls) -> dict:
        return {}

    @staticmethod
    def config_defaults(base_dir: str) -> dict:
        defaults = dict(InstanceRef.config_defaults(base_dir))
        defaults["storage"] = ConfigurableClassData(__name__, PooledSqliteStorage.__name__,
                                                    yaml.dump({"base_dir": base_dir}))
        defaults["event_log_storage"] = ConfigurableClassData(
            __name__, PooledSqliteEventLogStorage.__name__, yaml.dump({"base_dir": _event_logs_directory(base_dir)}))
        return defaults
