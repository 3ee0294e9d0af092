"""Bringing `reviewed_questions` up to date by writing only the rows whose state changed.

The rebuild used to curate every question and rewrite every row (a DELETE per key: 10,029 DuckDB calls at
10,000 questions) inside one exclusive lock held for the whole read-compute-write, 5 to 10 s in which every
other process (the review app, clip runs) waited. Now:
1. short locks read the marks (row count and newest timestamp per input table), then each input table (not
   the questions' provenance columns);
2. without the lock: curate, and compare with the stored rows (read in another short lock);
3. the changed rows are written in batches of `batch_rows`, each one transaction under its own lock (one
   set-based DELETE, one INSERT). Each batch first checks the marks: if a decision, assignment, annotation or
   question was written since step 1, the batch is not written and the update starts again from step 1 on
   the new inputs, so a run never writes a state computed from inputs another run has already moved past.
   After `max_restarts` it writes anyway: inputs that keep moving mean the review sensor has more runs coming.
Between batches other processes take their turn, and a reader may see some rows updated and others not yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.curation.live import SOURCES, columns, decode
from hvbench_assets.core.curation.state import curate
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.warehouse import Warehouse

BATCH_ROWS = 1000  # ~0.1 s of writing on an idle machine: the lock is handed over well within a second under load too
# the file lock is not fair: released and taken again at once, it stays with this process while others poll
# (every 20-70 ms, Warehouse._file_lock); a pause between batches lets a waiting reader or clip run in
PAUSE_S = 0.08
COMPARED = ("video_id", "task", "abbrev", "content_hash", "state", "answer", "answer_text", "options", "reviewers",
            "decision_ids", "reason")


class InputsMoved(Exception):
    """Inputs of reviewed_questions were written after they were read: what was computed may be stale."""


@dataclass
class UpdateResult:
    rows: list[dict[str, Any]]  # every current row, as curate() gives them
    written: int = 0  # rows inserted or replaced
    deleted: int = 0  # rows of questions that are gone
    batches: int = 0
    restarts: int = 0
    lock_s: list[float] = field(default_factory=list)  # how long each read and each batch held the warehouse


def _marks(run: Callable[[str, list], list[tuple]]) -> dict[str, tuple]:
    """(count, newest) per input table, through `run(sql, params)` on whatever connection is open."""
    have = {r[0] for r in run("SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()", [])}
    parts = [f"SELECT '{n}' AS name, count(*) AS n, max(\"{s.stamp}\") AS t FROM \"{s.spec.name}\"" for n, s in SOURCES.items()
             if s.spec.name in have]
    return {r[0]: (r[1], r[2]) for r in run(" UNION ALL ".join(parts), [])} if parts else {}


def _read(wh: Warehouse) -> tuple[dict[str, tuple], dict[str, list[dict[str, Any]]], list[float]]:
    """The marks, then each input table, each in its own short lock; JSON decoded after. Not one snapshot, and
    need not be: a write moved in between changes the marks, so the batches refuse what was computed here."""
    holds = []

    def timed(sql: str, params: list | None = None) -> list[dict[str, Any]]:
        if holds:
            time.sleep(PAUSE_S)  # let a waiting process in between the reads too
        t0 = time.perf_counter()
        rows = wh.query(sql, params or [])
        holds.append(time.perf_counter() - t0)
        return rows

    marks = _marks(lambda sql, params: [tuple(r.values()) for r in timed(sql, params)])
    raw = {name: timed(f'SELECT {columns(wh, src.spec)} FROM "{src.spec.name}"') if name in marks else []
           for name, src in SOURCES.items()}
    return marks, {name: decode(SOURCES[name].spec, rows) for name, rows in raw.items()}, holds


def _stored(wh: Warehouse, provenance: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], float]:
    if not wh.has_table(REVIEWED_QUESTIONS.name):
        return {}, 0.0
    cols = ", ".join(f'"{c}"' for c in ("question_id", *COMPARED, *provenance) if c in REVIEWED_QUESTIONS.column_names)
    t0 = time.perf_counter()
    rows = wh.query(f'SELECT {cols} FROM "{REVIEWED_QUESTIONS.name}"')
    held = time.perf_counter() - t0
    return {r["question_id"]: r for r in decode(REVIEWED_QUESTIONS, rows)}, held


def changes(rows: list[dict[str, Any]], stored: Mapping[str, Mapping[str, Any]],
            provenance: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows to write: new, or differing from the stored row or its provenance; ids of stored rows to delete)."""
    current = {r["question_id"] for r in rows}
    write = [r for r in rows if (old := stored.get(r["question_id"])) is None
             or any(old.get(c) != r.get(c) for c in COMPARED)
             or any(old.get(k) != v for k, v in provenance.items() if k in REVIEWED_QUESTIONS.column_names)]
    return write, sorted(set(stored) - current)


def update_reviewed(wh: Warehouse, excluded: frozenset[str], provenance: Mapping[str, Any], *,
                    batch_rows: int = BATCH_ROWS, max_restarts: int = 3, pause_s: float = PAUSE_S,
                    between_batches: Callable[[int], None] | None = None) -> UpdateResult:
    """Write what changed in reviewed_questions (see module doc). `between_batches(n)` is called after the
    n-th batch committed, with the lock released (tests)."""
    wh.ensure(REVIEWED_QUESTIONS)
    result = UpdateResult([])
    while True:
        marks, inputs, holds = _read(wh)
        result.lock_s.extend(holds)
        rows = curate(inputs["questions"], inputs["decisions"], excluded, inputs["assignments"], inputs["annotations"])
        stored, held = _stored(wh, provenance)
        result.lock_s.append(held)
        write, gone = changes(rows, stored, provenance)
        result.rows = rows
        items = [(r["question_id"], r) for r in write] + [(qid, None) for qid in gone]
        check = result.restarts < max_restarts
        try:
            for start in range(0, len(items), batch_rows):
                chunk = items[start:start + batch_rows]
                _write_batch(wh, chunk, provenance, marks if check else None, result)
                result.written += sum(r is not None for _, r in chunk)
                result.deleted += sum(r is None for _, r in chunk)
                result.batches += 1
                if between_batches is not None:
                    between_batches(result.batches)
                if start + batch_rows < len(items):
                    time.sleep(pause_s)
            return result
        except InputsMoved:
            result.restarts += 1


def _write_batch(wh: Warehouse, chunk: list[tuple[str, dict[str, Any] | None]], provenance: Mapping[str, Any],
                 marks: dict[str, tuple] | None, result: UpdateResult) -> None:
    t0: list[float] = []

    def build(con):
        t0.append(time.perf_counter())
        if marks is not None and _marks(lambda sql, params: con.execute(sql, params).fetchall()) != marks:
            raise InputsMoved()
        return [(REVIEWED_QUESTIONS, {"question_id": qid}, [row] if row is not None else [], provenance)
                for qid, row in chunk]

    try:
        wh.read_then_replace([REVIEWED_QUESTIONS], build)
    finally:
        if t0:
            result.lock_s.append(time.perf_counter() - t0[0])
