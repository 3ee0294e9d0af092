"""What the review app's route modules share: the refusal every handler raises, and the checks of request fields."""

from __future__ import annotations

from typing import Any

from hvbench_assets.core.tasks import annotations


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def number(value: Any, name: str, low: float, high: float) -> float | None:
    """An optional number of the request: finite (annotations.finite_number) and within [low, high], or 400."""
    if value is None or value == "":
        return None
    try:
        x = annotations.finite_number(value, name)
    except annotations.BadAnnotation as exc:
        raise Refused(400, str(exc)) from None
    if not low <= x <= high:
        raise Refused(400, f"{name}: {x:g} is outside {low:g}..{high:g}")
    return x


def text(data: dict[str, Any], name: str, max_len: int, required: bool = False) -> str | None:
    """An optional text field of the request (a string of at most `max_len` characters), or 400."""
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise Refused(400, f"{name} is missing")
        return None
    if not isinstance(value, str):
        raise Refused(400, f"{name}: expected text, got {type(value).__name__}")
    if len(value) > max_len:
        raise Refused(400, f"{name}: longer than {max_len} characters")
    return value
