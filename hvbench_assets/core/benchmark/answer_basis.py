"""Where a question's answer rests: the answer's tracks and whether a label row changed since the question named it
(read by explain.py, evidence.py and the task assets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.tasks.rules import named_number


def answer_tracks(q: Mapping[str, Any]) -> list[int]:
    """Track ids behind the right answer: the tracks drawn with the person number its text names ("Person 2",
    "2-happy"), else the target (also for rows stored before person numbers, whose marking has letters)."""
    numbers = (q.get("marking") or {}).get("numbers") or {}
    if numbers and (named := named_number(q.get("answer_text"))) is not None:
        return sorted(int(t) for t, n in numbers.items() if int(n) == named)
    return [int(t) for t in q.get("target_track_ids") or []]


def row_changed(ref: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool | None:
    """Whether a label row was rematerialized since a question named it (`ref`); None when it no longer exists."""
    if current is None:
        return None
    return (str(current.get("materialized_at")) != str(ref.get("materialized_at"))
            or current.get("code_version") != ref.get("code_version"))
