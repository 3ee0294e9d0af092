"""The paper's speaker rules as pure functions: longest positive run, speaking flag, veto."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_MIN_RUN = 12  # frames; a track speaks when its longest positive run is longer


def longest_positive_run(scores: Sequence[float]) -> tuple[int, int | None]:
    """(length, start index) of the longest run of scores > 0; (0, None) when there is none."""
    best, best_start, run, start = 0, None, 0, 0
    for i, s in enumerate(scores):
        if s is not None and s > 0:
            if run == 0:
                start = i
            run += 1
            if run > best:
                best, best_start = run, start
        else:
            run = 0
    return best, best_start


def is_speaking(scores: Sequence[float], min_run: int = DEFAULT_MIN_RUN) -> bool:
    return longest_positive_run(scores)[0] > min_run


@dataclass(frozen=True)
class PersonClass:
    """male / female / child with a confidence, from a voice (L10) or a face (L3)."""

    label: str
    confidence: float


def voice_class(row: Mapping[str, Any] | None) -> PersonClass | None:
    if not row or row.get("status") != "ok" or not row.get("voice_class"):
        return None
    return PersonClass(row["voice_class"], float(row.get("confidence") or 0.0))


def face_class(row: Mapping[str, Any] | None, child_below_years: float = 13.0) -> PersonClass | None:
    """male / female / child from an L3 demographics row (age median, gender mode, vote share).
    Tolerates the usual column spellings; None when the row is missing or not ok."""
    if not row or row.get("status") != "ok":
        return None
    age = _first(row, "age_median", "age")
    if age is not None and float(age) < child_below_years:
        return PersonClass("child", float(_first(row, "age_confidence") or 0.8))
    gender = _first(row, "gender_mode", "gender")
    if not gender:
        return None
    label = {"man": "male", "woman": "female", "m": "male", "f": "female"}.get(str(gender).lower(), str(gender).lower())
    if label not in ("male", "female"):
        return None
    # the calibrated confidence where L3 has one (the offline ensemble's smallest model agreement), else the vote share
    return PersonClass(label, float(_first(row, "gender_confidence", "gender_share", "gender_score") or 0.0))


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    return next((row[k] for k in keys if row.get(k) is not None), None)


def veto(voice: PersonClass | None, face: PersonClass | None, min_confidence: float = 0.7) -> str | None:
    """The reason to overturn a positive speaking flag, or None. Only a clear disagreement counts:
    both sides known, both confident, and different classes (e.g. a child's voice on a man's face)."""
    if voice is None or face is None:
        return None
    if voice.label == face.label:
        return None
    if voice.confidence < min_confidence or face.confidence < min_confidence:
        return None
    return (f"voice is {voice.label} ({voice.confidence:.2f}) but the face is {face.label} "
            f"({face.confidence:.2f})")


def summarise(scores: np.ndarray, min_run: int = DEFAULT_MIN_RUN) -> dict:
    run, start = longest_positive_run(scores)
    return {"longest_run": run, "longest_run_start": start, "raw_speaking": run > min_run,
            "positive_share": round(float(np.mean(scores > 0)) if len(scores) else 0.0, 3)}
