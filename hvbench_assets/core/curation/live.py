"""The review state a long-lived process (the review web app) keeps in memory and refreshes by what changed.

`load_state` reads, JSON-decodes and hashes every question on each call: 2.2 s per request at 20,000
questions. `LiveState.refresh` instead asks the warehouse, in one short lock, for the row count and newest
timestamp of each table the queues read, loads only the rows written since (a table whose count then
disagrees is read again whole: rows were deleted), and recomputes the curated state of the questions those
rows touch. The rules stay in state.py / queue.py; this module only decides what to recompute.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.curation.state import curate, is_question
from hvbench_assets.core.curation.tables import REVIEW_ASSIGNMENTS, REVIEW_DECISIONS, REVIEW_FLAGS
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import TableSpec, Warehouse
from hvbench_assets.core.warehouse.store import decode_json


@dataclass(frozen=True)
class Source:
    spec: TableSpec
    stamp: str  # the column every write sets to its time (provenance or creation)
    key: Callable[[Mapping[str, Any]], Any]


# question columns no review rule or page list reads (provenance: most of a row's bytes); question pages read
# the whole row themselves
UNREAD = ("label_rows", "rule_params", "call_ids")


def columns(wh: Warehouse, spec: TableSpec) -> str:
    """The SELECT list of a source table: for questions, its columns but the unread ones (a table written by
    an older version may lack some)."""
    if spec is not QUESTIONS:
        return "*"
    have = {r["column_name"] for r in wh.query("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                               "AND table_catalog = current_database()", [spec.name])}
    return ", ".join(f'"{c}"' for c in spec.column_names if c in have and c not in UNREAD)


SOURCES = {
    "questions": Source(QUESTIONS, "materialized_at", lambda r: r["question_id"]),
    "decisions": Source(REVIEW_DECISIONS, "created_at", lambda r: r["decision_id"]),
    "assignments": Source(REVIEW_ASSIGNMENTS, "assigned_at", lambda r: (r["question_id"], r["reviewer"])),
    "annotations": Source(ANNOTATIONS, "created_at", lambda r: r["annotation_id"]),
}
# the app follows the evaluation's flags too (flags.py); they change no question's state, so curate never reads them
LIVE_SOURCES = {**SOURCES, "flags": Source(REVIEW_FLAGS, "written_at",
                                           lambda r: (r["benchmark"], r["question_id"], r["content_hash"]))}


def decode(spec: TableSpec, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """JSON columns of raw `query` rows decoded (as `Warehouse.rows` does), outside the warehouse lock."""
    return decode_json(spec, rows)


def marks(wh: Warehouse, sources: Mapping[str, Source] = SOURCES) -> dict[str, tuple[int, Any]]:
    """name -> (row count, newest stamp) of each source table that exists, in one statement."""
    have = {r["table_name"] for r in wh.query(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()")}
    parts = [f"SELECT '{name}' AS name, count(*) AS n, max(\"{s.stamp}\") AS t FROM \"{s.spec.name}\""
             for name, s in sources.items() if s.spec.name in have]
    if not parts:
        return {}
    return {r["name"]: (int(r["n"]), r["t"]) for r in wh.query(" UNION ALL ".join(parts))}


@dataclass(frozen=True)
class Snapshot:
    """One consistent view for one request. Lists and dicts are never changed after they are handed out. A
    refresh that finds nothing new returns the same Snapshot, and a part whose table did not change is the same
    object in the next one: `memo` keeps what pages derive from the parts they name (queues, counts, agreement)
    until one of those parts changes."""

    questions: list[dict[str, Any]]  # sorted by task, clip, id (the order of the queues)
    decisions: list[dict[str, Any]]  # by created_at, decision_id (as `store.decisions`)
    assignments: list[dict[str, Any]]
    annotations: list[dict[str, Any]]  # by created_at
    hashes: dict[str, str]  # question_id -> content hash
    reviewed: list[dict[str, Any]]  # curate(...) of every question, in curate's order
    by_id: dict[str, dict[str, Any]]  # question_id -> question
    states: dict[str, dict[str, Any]]  # question_id -> its reviewed row
    flags: list[dict[str, Any]] = field(default_factory=list)  # review_flags rows (flags.py)
    version: int = 0  # counts the snapshots a LiveState made
    derived: dict[Any, tuple[tuple, Any]] = field(default_factory=dict, compare=False, repr=False)  # the LiveState's

    PARTS = ("questions", "decisions", "assignments", "annotations", "hashes", "reviewed", "by_id", "states", "flags")

    def memo(self, key: Any, compute: Callable[[], Any], reads: tuple[str, ...] = PARTS) -> Any:
        """compute(), a pure function of the parts named in `reads`, kept until one of them is another object
        (every part by default; an annotation queue reads only questions and annotations, so it outlives a
        decision). Callers never change the result. Two threads may both compute it: the values are equal."""
        parts = tuple(getattr(self, name) for name in reads)
        hit = self.derived.get((key, reads))
        if hit is not None and len(hit[0]) == len(parts) and all(a is b for a, b in zip(hit[0], parts)):
            return hit[1]
        value = compute()
        self.derived[(key, reads)] = (parts, value)  # holds the parts: their ids stay theirs while compared
        return value

    def state(self) -> dict[str, Any]:
        """The dict `store.load_state` returns, plus the precomputed parts and `memo`."""
        return {"questions": self.questions, "decisions": self.decisions, "assignments": self.assignments,
                "annotations": self.annotations, "hashes": self.hashes, "reviewed": self.reviewed,
                "states": self.states, "by_id": self.by_id, "flags": self.flags, "memo": self.memo,
                "version": self.version}


@contextlib.contextmanager
def _collection_paused():
    """The cyclic garbage collector off while a load reads and makes ~100,000 dicts and lists that all stay alive:
    each collection it would trigger walks them all for nothing (a quarter of the first load at 20,000 questions)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _sort_key(q: Mapping[str, Any]) -> tuple:
    return (q.get("task") or "", q.get("video_id") or "", q["question_id"])


def _at(t: Any) -> tuple:
    return (t is None, t or dt.datetime.min)  # as ORDER BY in DuckDB: nulls last


def _decision_order(d: Mapping[str, Any]) -> tuple:
    return (_at(d["created_at"]), d["decision_id"])


class LiveState:
    """Thread-safe; one per process and warehouse. `refresh(wh)` returns the current Snapshot."""

    def __init__(self, excluded: frozenset[str]):
        self.excluded = excluded
        self._lock = threading.Lock()
        self._rows: dict[str, dict[Any, dict[str, Any]]] = {name: {} for name in LIVE_SOURCES}
        self._marks: dict[str, tuple[int, Any]] = {}
        self._hashes: dict[str, str] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._snapshot: Snapshot | None = None
        self._derived: dict[Any, tuple[tuple, Any]] = {}  # Snapshot.memo's, shared by the snapshots
        self._position: dict[str, int] = {}  # question_id -> its index in the snapshot's `reviewed`
        self.loads = {name: 0 for name in LIVE_SOURCES}  # whole-table reads (tests, benchmarks)

    def refresh(self, wh: Warehouse) -> Snapshot:
        """Locks are taken in one order, the warehouse's before this state's, as the app's handlers do (they hold
        a warehouse batch while they read the state); a refresh that opened the warehouse itself lets it go
        once the rows are read, before recomputing (the first load: about a second at 20,000 questions)."""
        with contextlib.ExitStack() as reading:
            reading.enter_context(wh.batch())  # one lock and one attach for the marks and every delta
            with self._lock, _collection_paused():
                now, raw = self._read(wh)
                reading.close()  # the caller's own batch, if any, stays open
                if raw or self._snapshot is None:
                    self._apply(raw)
                self._marks = now  # only once applied: a failed refresh reads the same rows again next time
                return self._snapshot

    def _read(self, wh: Warehouse) -> tuple[dict[str, tuple[int, Any]], dict[str, tuple[bool, list[dict[str, Any]]]]]:
        """The marks and the rows written since the last refresh: (whole table?, rows) per changed source."""
        raw: dict[str, tuple[bool, list[dict[str, Any]]]] = {}
        now = marks(wh, LIVE_SOURCES)
        for name, src in LIVE_SOURCES.items():
            old, new = self._marks.get(name), now.get(name)
            if old == new:
                continue
            if new is None:
                raw[name] = (True, [])
            elif old is None or old[1] is None or new[0] < old[0]:
                raw[name] = (True, wh.query(f'SELECT {columns(wh, src.spec)} FROM "{src.spec.name}"'))
            else:  # >=: a row written in the same microsecond as the newest one seen is read again
                raw[name] = (False, wh.query(f'SELECT {columns(wh, src.spec)} FROM "{src.spec.name}" '
                                             f'WHERE "{src.stamp}" >= ?', [old[1]]))
        for name, (whole, delta) in list(raw.items()):
            if not whole and self._grows_wrong(name, delta, now[name][0]):  # rows went away: read whole
                spec = LIVE_SOURCES[name].spec
                raw[name] = (True, wh.query(f'SELECT {columns(wh, spec)} FROM "{spec.name}"'))
        return now, raw

    def _grows_wrong(self, name: str, delta: list[dict[str, Any]], count: int) -> bool:
        key, have = LIVE_SOURCES[name].key, self._rows[name]
        return len(have) + len({key(r) for r in delta if key(r) not in have}) != count

    def _apply(self, raw: dict[str, tuple[bool, list[dict[str, Any]]]]) -> None:
        dirty: set[str] | None = set()  # question ids whose curated row may change; None: all
        for name, (whole, rows) in raw.items():
            src = LIVE_SOURCES[name]
            rows = decode(src.spec, rows)
            self.loads[name] += whole
            table = {} if whole else dict(self._rows[name])
            for r in rows:
                table[src.key(r)] = r
            if name == "flags":
                pass  # no question's state reads them
            elif whole and name != "annotations":
                dirty = None
            elif dirty is not None:
                if name == "annotations":  # a question's state reads the annotations of its clip
                    videos = {r["video_id"] for r in (table.values() if whole else rows)}
                    dirty |= {q["question_id"] for q in self._rows["questions"].values() if q.get("video_id") in videos}
                else:
                    dirty |= {r["question_id"] for r in rows}
            self._rows[name] = table
        questions = self._rows["questions"]
        if "questions" in raw:
            fresh = raw["questions"][1] if not raw["questions"][0] else questions.values()
            hashes = {qid: h for qid, h in self._hashes.items() if qid in questions}
            for q in fresh:
                hashes[q["question_id"]] = question_content_hash(q)
            self._hashes = hashes
            if dirty is not None:
                dirty |= {r["question_id"] for r in raw["questions"][1]}
        ordered = sorted(questions.values(), key=_sort_key) if "questions" in raw or self._snapshot is None \
            else self._snapshot.questions
        decisions = sorted(self._rows["decisions"].values(), key=_decision_order) \
            if "decisions" in raw or self._snapshot is None else self._snapshot.decisions
        prev = self._snapshot
        assignments = list(self._rows["assignments"].values()) if "assignments" in raw or prev is None else prev.assignments
        annotations = sorted(self._rows["annotations"].values(), key=lambda a: _at(a["created_at"])) \
            if "annotations" in raw or prev is None else prev.annotations
        flags = list(self._rows["flags"].values()) if "flags" in raw or prev is None else prev.flags
        states = {qid: r for qid, r in self._states.items() if qid in questions} if "questions" in raw \
            else dict(self._states)
        todo = []
        for q in ordered:
            qid = q["question_id"]
            if dirty is None or qid in dirty or qid not in states:
                if is_question(q):
                    todo.append(q)
                else:  # an annotation request (no question text) has no row
                    states.pop(qid, None)
        ids = {q["question_id"] for q in todo}
        if todo:
            for row in curate(todo, [d for d in decisions if d["question_id"] in ids], self.excluded,
                              [a for a in assignments if a["question_id"] in ids], annotations, self._hashes):
                states[row["question_id"]] = row
        self._states = states
        same = prev is not None and "questions" not in raw  # the question dicts are new objects only then
        if same:  # the same questions in the same order: only the recomputed rows change place in the list
            reviewed = list(prev.reviewed)
            for qid in ids:
                reviewed[self._position[qid]] = states[qid]
        else:
            reviewed = [states[q["question_id"]] for q in ordered if q["question_id"] in states]  # curate's order
            self._position = {r["question_id"]: i for i, r in enumerate(reviewed)}
        self._snapshot = Snapshot(ordered, decisions, assignments, annotations,
                                  prev.hashes if same else dict(self._hashes), reviewed,
                                  prev.by_id if same else dict(questions), states, flags,
                                  version=prev.version + 1 if prev is not None else 1, derived=self._derived)
