"""Leases: an unassigned item goes to one reviewer at a time.

When the app hands a reviewer the next item of a queue, it records a lease (reviewer, queue, question, expiry).
Another reviewer asking meanwhile is handed the next item nobody else holds. A reviewer holds one lease per queue:
taking the next item drops the last one, and a lease lapses after `minutes` (a reviewer who walks away). Items
assigned to named reviewers need no lease (each of them must see it). A lease only schedules: a decision on an
item someone else holds is still stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hvbench_assets.core.curation.decisions import first_open
from hvbench_assets.core.curation.tables import REVIEW_LEASES
from hvbench_assets.core.warehouse import Warehouse

DEFAULT_LEASE_MINUTES = 10.0


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def held_by_others(leases: Sequence[Mapping[str, Any]], reviewer: str, queue: str, now: dt.datetime) -> set[str]:
    """Question ids another reviewer holds in `queue` right now."""
    return {r["question_id"] for r in leases
            if r["queue"] == queue and r["reviewer"] != reviewer and r["expires_at"] is not None and r["expires_at"] > now}


def held(warehouse: Warehouse, reviewer: str, queue: str) -> set[str]:
    """Question ids another reviewer holds in `queue` right now, read from the warehouse."""
    if not warehouse.has_table(REVIEW_LEASES.name):
        return set()
    rows = warehouse.query(f'SELECT reviewer, queue, question_id, expires_at FROM "{REVIEW_LEASES.name}" '
                           "WHERE queue = ? AND reviewer <> ?", [queue, reviewer])
    return held_by_others(rows, reviewer, queue, _now())


def take(warehouse: Warehouse, reviewer: str, queue: str, candidates: Sequence[Mapping[str, Any]],
         needs_lease: Callable[[Mapping[str, Any]], bool], minutes: float = DEFAULT_LEASE_MINUTES,
         ) -> tuple[Mapping[str, Any] | None, int]:
    """The first of `candidates` (queue order) that no other reviewer holds, leased to `reviewer` when
    `needs_lease(item)`; and how many candidates are open to this reviewer. The read of the leases and the
    write of the new one are one transaction under the warehouse lock, so two reviewers asking at the same
    moment get different items."""
    chosen: list = [None, 0]

    def build(con):
        now = _now()
        leases = []
        if con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [REVIEW_LEASES.name]).fetchall():
            leases = [{"reviewer": r, "queue": q, "question_id": i, "expires_at": e} for r, q, i, e in con.execute(
                f'SELECT reviewer, queue, question_id, expires_at FROM "{REVIEW_LEASES.name}" WHERE queue = ?',
                [queue]).fetchall()]
        chosen[:] = first_open(candidates, held_by_others(leases, reviewer, queue, now), needs_lease)
        item = chosen[0]
        rows = ([{"question_id": item["question_id"], "expires_at": now + dt.timedelta(minutes=minutes)}]
                if item is not None and needs_lease(item) else [])
        mine = [r for r in leases if r["reviewer"] == reviewer]
        if not rows and not mine:
            return []  # nothing to record or drop: no write
        return [(REVIEW_LEASES, {"reviewer": reviewer, "queue": queue}, rows, None)]

    warehouse.read_then_replace([REVIEW_LEASES], build)
    return chosen[0], chosen[1]


def release(warehouse: Warehouse, reviewer: str, queue: str) -> None:
    """Drop `reviewer`'s lease in `queue` (after a skip or a decision)."""
    warehouse.replace(REVIEW_LEASES, {"reviewer": reviewer, "queue": queue}, [])
