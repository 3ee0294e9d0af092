"""The `model_calls` table: every model call as a row, and the response cache built on it.

The row id is the content hash of the request (backend, model id, messages with frames replaced
by their hashes, params), so an identical request finds its earlier answer and costs nothing.
Only successful rows answer from the cache; a failed row is overwritten by the next attempt.
No row ever holds an API key: requests are stored with images as hashes and without headers.
"""

from __future__ import annotations

import atexit
import datetime as dt
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any

import duckdb

from hvbench_assets.core.warehouse import TableSpec, Warehouse
from hvbench_assets.core.warehouse.store import _encode

MODEL_CALLS = TableSpec(
    "model_calls",
    (
        ("id", "VARCHAR"),  # content hash of the request
        ("model", "VARCHAR"),  # registry name
        ("model_id", "VARCHAR"),  # id sent to the endpoint
        ("backend", "VARCHAR"),  # openai | transformers
        ("endpoint", "VARCHAR"),  # base URL (no credentials)
        ("prompt_hash", "VARCHAR"),  # hash of system + user text
        ("prompt", "VARCHAR"),  # user text
        ("system", "VARCHAR"),
        ("params", "JSON"),
        ("inputs", "JSON"),  # frames sent, frame hashes, audio, caller context (clip, track, task)
        ("request", "JSON"),  # messages as sent, images as {sha256, bytes}
        ("response", "JSON"),  # raw response body (parsed) or the error details
        ("text", "VARCHAR"),
        ("tokens_in", "INTEGER"),
        ("tokens_out", "INTEGER"),
        ("latency_s", "DOUBLE"),  # wall time of the successful attempt (all attempts when failed)
        ("attempts", "INTEGER"),
        ("error", "VARCHAR"),  # NULL when the call succeeded
        ("created_at", "TIMESTAMP"),
    ),
    key=("id",),
    provenance=False,
    description="Every MLLM/LLM call: request summary, raw response, tokens, latency, error (also the cache)",
)


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    logs = list(_LIVE)
    for log in logs:
        try:
            log.flush()
        except Exception:  # noqa: BLE001 - best effort at exit; the rows are a cache and a log
            pass
    for log in logs:
        log.stop_writer()


class CallLog:
    """Reads and writes `model_calls`, thread-safe and cheap per call.

    Lookups hit an in-memory index of the successful rows (loaded with one query, kept current by
    this process's writes); a row written by another process after the load is simply not seen,
    which costs one duplicate request at most. Writes go through one writer thread that commits
    whatever has queued up in one transaction, so many request threads do not queue on the
    warehouse file lock one by one.
    """

    def __init__(self, warehouse: Warehouse):
        self.warehouse = warehouse
        self._lock = threading.Lock()
        self._index: dict[str, dict[str, Any]] | None = None
        self._pending: list[tuple[dict[str, Any], threading.Event, list]] = []
        self._writing: list[tuple[threading.Event, list]] = []
        self._wake = threading.Condition(self._lock)
        self._writer: threading.Thread | None = None
        self._flushing = 0  # callers waiting for a commit: skip the linger
        self._stopping = False
        self.linger_s = 2.0  # rows nobody waits for commit in batches: one DuckDB open per ~2 s, not per row

    def _load(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._index is None:
                # one warehouse open: a missing table is an empty cache (the writer creates it)
                cols = ("id", "text", "tokens_in", "tokens_out", "latency_s")
                with self.warehouse.connect() as con:
                    try:
                        rows = con.execute(f'SELECT {", ".join(cols)} FROM "model_calls" '
                                           "WHERE error IS NULL AND text IS NOT NULL AND text <> ''").fetchall()
                    except duckdb.CatalogException:
                        rows = []
                self._index = {r[0]: dict(zip(cols, r)) for r in rows}
            return self._index

    def lookup(self, call_id: str) -> dict[str, Any] | None:
        """The successful row for this request (id, text, tokens_in, tokens_out, latency_s), or None."""
        return self._load().get(call_id)

    def record(self, row: Mapping[str, Any], wait: bool = True) -> None:
        """Store one call. `wait=True` returns once it is committed; `wait=False` returns at once
        (call `flush()` later; an exiting process flushes by itself). A successful row for the same
        id is never replaced by a failure."""
        index = self._load()
        row = dict(row)
        row.setdefault("created_at", dt.datetime.now(dt.timezone.utc).replace(tzinfo=None))
        done, failure = threading.Event(), []
        with self._lock:
            if row.get("error") is not None and row["id"] in index:
                return
            if row.get("error") is None and row.get("text"):
                index[row["id"]] = {k: row.get(k) for k in ("id", "text", "tokens_in", "tokens_out", "latency_s")}
            self._pending.append((row, done, failure))
            self._wake.notify()
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write_loop, name="model-calls-writer", daemon=True)
                self._writer.start()
                _LIVE.add(self)
        if wait:
            self._wait([(done, failure)])

    def _wait(self, waiters: list[tuple[threading.Event, list]]) -> None:
        with self._lock:
            self._flushing += 1
            self._wake.notify()
        try:
            for done, failure in waiters:
                done.wait()
                if failure:
                    raise failure[0]
        finally:
            with self._lock:
                self._flushing -= 1

    def flush(self) -> None:
        """Wait until every recorded row is committed; raises the first write error."""
        with self._lock:
            waiters = [(d, f) for _, d, f in self._pending] + list(self._writing)
        self._wait(waiters)

    def stop_writer(self, timeout_s: float = 30.0) -> None:
        """Ends the idle writer thread now (it ends by itself 5 s after its last row). At exit this runs before
        the interpreter shuts down: a writer ending later dropped the last reference to a DuckDB connection
        (a DuckLake catalog's) in its own thread during shutdown, which aborts the process."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
            writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join(timeout_s)
        with self._lock:
            self._stopping = False

    def _write_loop(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    if not self._stopping:
                        self._wake.wait(timeout=5.0)
                    if not self._pending:
                        self._writer = None
                        return
                # let a few more rows arrive: one transaction per ~linger, not per row
                deadline = time.monotonic() + self.linger_s
                while not self._flushing and time.monotonic() < deadline:
                    self._wake.wait(timeout=max(0.0, deadline - time.monotonic()))
                batch, self._pending = self._pending, []
                self._writing = [(d, f) for _, d, f in batch]
            try:
                self._write([r for r, _, _ in batch])
            except Exception as exc:  # every waiter of this batch sees the error
                for _, _, failure in batch:
                    failure.append(exc)
            for _, done, _ in batch:
                done.set()
            with self._lock:
                self._writing = []

    def _write(self, rows: list[dict[str, Any]]) -> None:
        self.warehouse.ensure(MODEL_CALLS)
        last = {r["id"]: r for r in rows}  # one row per id, the latest wins
        names = MODEL_CALLS.column_names
        unknown = {k for r in last.values() for k in r} - set(names)
        if unknown:
            raise ValueError(f"model_calls: unknown columns {sorted(unknown)}")
        types = dict(MODEL_CALLS.all_columns)
        values = [[_encode(r.get(n), types[n]) for n in names] for r in last.values()]
        cols = ", ".join(f'"{n}"' for n in names)
        marks = ", ".join("?" for _ in names)
        everything = list(zip(last, values))

        def transaction() -> None:  # DuckLake runs it again after a commit conflict: it re-reads first
            with self.warehouse.connect() as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    todo = everything
                    failed = [i for i, r in last.items() if r.get("error") is not None]
                    if failed:  # another process may have answered these meanwhile: keep its success
                        ok = {r[0] for r in con.execute(
                            'SELECT id FROM "model_calls" WHERE error IS NULL AND list_contains(?, id)', [failed]
                        ).fetchall()}
                        todo = [(i, v) for i, v in everything if i not in ok]
                    if todo:
                        con.executemany('DELETE FROM "model_calls" WHERE id = ?', [[i] for i, _ in todo])
                        con.executemany(f'INSERT INTO "model_calls" ({cols}) VALUES ({marks})', [v for _, v in todo])
                    con.execute("COMMIT")
                except Exception:
                    try:  # a failed COMMIT has ended the transaction already: keep the original error
                        con.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    raise

        self.warehouse.transaction(transaction)

    def get(self, call_id: str) -> dict[str, Any] | None:
        """The full stored row (any status)."""
        self._load()
        rows = self.warehouse.rows(MODEL_CALLS, id=call_id)
        return rows[0] if rows else None
