"""Reading model replies strictly: JSON objects (code fences allowed), one-sentence descriptions."""

from __future__ import annotations

import json
import re
from typing import Any


class BadReply(ValueError):
    """The model answered, but not in the requested form."""


def json_object(text: str | None) -> dict[str, Any]:
    if not text or not text.strip():
        raise BadReply("empty reply")
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    if fence:
        body = fence.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise BadReply(f"no JSON object in reply: {text[:120]!r}")
    try:
        value = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise BadReply(f"reply is not valid JSON ({exc.msg}): {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise BadReply("reply JSON is not an object")
    return value


def string_list(obj: dict[str, Any], key: str, n: int) -> list[str]:
    items = obj.get(key)
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise BadReply(f"reply has no list of strings under {key!r}")
    items = [s.strip() for s in items if s.strip()]
    if len(items) < n:
        raise BadReply(f"reply lists {len(items)} {key}, {n} wanted")
    return items


def person_sentence(text: str | None) -> str:
    """The describer's "The person is ..." sentence, first sentence only."""
    if not text or not text.strip():
        raise BadReply("empty description")
    s = " ".join(text.strip().strip('"').split())
    m = re.search(r"the person is\b.*?(?:[.!?](?=\s|$)|$)", s, re.I)
    if not m:
        raise BadReply(f"description does not start with 'The person is': {s[:120]!r}")
    sentence = m.group(0).strip()
    sentence = sentence[0].upper() + sentence[1:]
    return sentence if sentence[-1] in ".!?" else sentence + "."


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
