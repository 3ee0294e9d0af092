"""Speaking per person: L7 flags tracks, but one person may be several tracks (L2 merges a face lost and
found again). Tasks that count speakers ("exactly one speaker", ASD) count persons, not tracks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def person_groups(track_ids: Iterable[int], person_count_row: Mapping[str, Any] | None) -> list[list[int]]:
    """L2's `persons` groups restricted to the given tracks; a track L2 does not list is its own person
    (L2 missing or older than L1). Ordered by each group's first track id."""
    ids = sorted(set(track_ids))
    groups: list[list[int]] = []
    seen: set[int] = set()
    persons = (person_count_row or {}).get("persons") if (person_count_row or {}).get("status") == "ok" else None
    for group in persons or []:
        members = sorted(t for t in group if t in ids and t not in seen)
        if members:
            groups.append(members)
            seen.update(members)
    groups += [[t] for t in ids if t not in seen]
    return sorted(groups, key=lambda g: g[0])


def speaking_persons(speaker_rows: Iterable[Mapping[str, Any]], person_count_row: Mapping[str, Any] | None) -> list[list[int]]:
    """Each entry is one speaking person: the track ids of that person (all of them, speaking or not, as
    L2 grouped them). A person speaks when any of their tracks has `speaking` true in L7."""
    rows = [r for r in speaker_rows if r.get("track_id") is not None]
    speaking = {r["track_id"] for r in rows if r.get("speaking")}
    return [g for g in person_groups((r["track_id"] for r in rows), person_count_row) if speaking & set(g)]


def person_of(track_id: int, groups: list[list[int]]) -> int | None:
    """Index of the person (in `person_groups` order) a track belongs to."""
    return next((i for i, g in enumerate(groups) if track_id in g), None)
