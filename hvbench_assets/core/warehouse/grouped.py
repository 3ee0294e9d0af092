"""Held writes: a batch step's per-clip replaces committed together.

Each commit that changes a table of the DuckDB file folds the WAL into the file (Warehouse.WAL_LIMIT), about
10 ms of CPU per changed table; a run over 8 short clips made 216 write transactions (4.1 CPU-s), most of them
one clip's rows of one step. Inside `grouped_writes()`, this thread's plain replaces (`replace_tables`, and
`replace` / `replace_many` through it) are held and committed in one transaction per warehouse when the group
ends, or before this thread reads a table they touch, opens a connection of its own, or reads-then-replaces: a
thread always reads what it wrote.

Each held write carries its owner (the batch's clip). When the combined commit fails, each owner's writes are
committed alone, and an owner whose own commit fails is listed in `failed` with the reason: one clip's bad rows
never cost the other clips theirs."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

_LOCAL = threading.local()
# a forked process (a batch step's helper, a forked step) commits only what it holds itself: its parent commits the rest
os.register_at_fork(after_in_child=lambda: setattr(_LOCAL, "group", None))


def current() -> WriteGroup | None:
    return getattr(_LOCAL, "group", None)


@dataclass
class _Held:
    warehouse: Any  # store.Warehouse (its _commit_held)
    owner: str | None
    items: list[tuple[Any, dict, list, Any]]  # (spec, key values, rows, provenance)


class WriteGroup:
    def __init__(self) -> None:
        self.owner: str | None = None  # who the next held writes belong to (a batch sets the clip's key)
        self.failed: dict[str, str] = {}  # owner -> why its writes were not committed
        self.commits = 0  # transactions made (for tests and benchmarks)
        self._held: dict[str, list[_Held]] = {}  # warehouse location -> its held writes, in order

    def hold(self, warehouse, items: Iterable[tuple]) -> int:
        """Keeps the writes for later; returns the row count their commit will write."""
        items = [(spec, dict(key_values), list(rows), provenance) for spec, key_values, rows, provenance in items]
        self._held.setdefault(str(warehouse.path), []).append(_Held(warehouse, self.owner, items))
        return sum(len(rows) for _, _, rows, _ in items)

    def touches(self, warehouse, sql: str | None = None) -> bool:
        """Whether writes held for `warehouse` might be read by `sql` (one of their tables' names appears in it;
        None: any held write counts)."""
        held = self._held.get(str(warehouse.path))
        if not held or sql is None:
            return bool(held)
        text = sql.lower()
        return any(spec.name.lower() in text for h in held for spec, *_ in h.items)

    def held_rows(self, warehouse, table: str) -> list[tuple[dict, list]]:
        """(key values, rows) of the writes held for `table` of `warehouse`, as their commit will leave them."""
        items = _latest(it for h in self._held.get(str(warehouse.path), []) for it in h.items)
        return [(key_values, rows) for spec, key_values, rows, _ in items if spec.name == table]

    def take(self, warehouse) -> tuple[list[tuple], Callable[[], None]]:
        """Removes the writes held for `warehouse` (to commit inside another transaction): their items, and a
        function that holds them again (when that transaction fails)."""
        location = str(warehouse.path)
        taken = self._held.pop(location, [])

        def put_back() -> None:
            self._held[location] = taken + self._held.get(location, [])

        return _latest(it for h in taken for it in h.items), put_back

    def flush(self, warehouse=None) -> None:
        """Commits what is held (for `warehouse`, or for every warehouse)."""
        for location in [str(warehouse.path)] if warehouse is not None else list(self._held):
            held = self._held.pop(location, [])
            if held:
                self._commit(held)

    def _commit(self, held: list[_Held]) -> None:
        wh = held[0].warehouse
        try:
            wh._commit_held(_latest(it for h in held for it in h.items))
            self.commits += 1
            return
        except Exception:  # noqa: BLE001 - each owner's writes are tried alone below
            if {h.owner for h in held} == {None}:
                raise
        by_owner: dict[str | None, list] = {}
        for h in held:
            by_owner.setdefault(h.owner, []).extend(h.items)
        unowned: Exception | None = None
        for owner, items in by_owner.items():
            try:
                wh._commit_held(_latest(items))
                self.commits += 1
            except Exception as exc:  # noqa: BLE001 - recorded against its owner
                if owner is None:
                    unowned = unowned or exc
                else:
                    self.failed[owner] = f"{type(exc).__name__}: {exc}"
        if unowned is not None:
            raise unowned


def _latest(items: Iterable[tuple]) -> list[tuple]:
    """Held writes in order, a later write to the same table and key replacing an earlier one (as it would have)."""
    out: dict[tuple, tuple] = {}
    for item in items:
        spec, key_values = item[0], item[1]
        key = (spec.name, tuple(key_values.get(k) for k in spec.key))
        out.pop(key, None)
        out[key] = item
    return list(out.values())


@contextlib.contextmanager
def grouped_writes() -> Iterator[WriteGroup]:
    """Holds this thread's plain replaces until the block ends (see the module docstring). Nested: the outer
    group commits."""
    outer = current()
    if outer is not None:
        yield outer
        return
    group = WriteGroup()
    _LOCAL.group = group
    try:
        yield group
    finally:
        _LOCAL.group = None
        group.flush()
