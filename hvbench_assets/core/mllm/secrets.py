"""Keep API keys out of everything hvbench stores or logs.

`scrub` is the one place that removes keys: every text or JSON value that came back from an endpoint
(reply text, raw body, error message) passes through it before it reaches `model_calls`,
`eval_responses`, a step-failure message or a log line, whatever the HTTP status was. It removes
every key configured for any registry entry (the values of their `api_key_env` variables), bearer
tokens, and strings shaped like OpenAI / Google keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
_KEYISH = re.compile(r"\b(?:sk-|AIza)[A-Za-z0-9_\-\*\.]{16,}")  # whole words: "task-based" stays
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9_\-\.\~\+/=]{4,}")
_MIN_LEN = 4  # shorter "keys" (or the placeholder EMPTY) would mangle ordinary text


def configured_secrets(key_envs: Iterable[str], environ: Mapping[str, str]) -> frozenset[str]:
    """The values of the named key variables that are set in `environ` (the keys themselves, never logged)."""
    values = (environ.get(name, "").strip() for name in key_envs if name)
    return frozenset(v for v in values if len(v) >= _MIN_LEN and v != "EMPTY")


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (text, or JSON-like dicts/lists holding text) with every secret, bearer token and
    key-shaped string replaced by ***. Longest secrets first, so one key inside another is caught."""
    ordered = sorted(set(secrets), key=len, reverse=True)
    return _scrub(value, ordered)


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for s in secrets:
            if s in value:
                value = value.replace(s, MASK)
        value = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
        return _KEYISH.sub(MASK, value)
    if isinstance(value, Mapping):
        return {_scrub(k, secrets) if isinstance(k, str) else k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v, secrets) for v in value)
    return value


def clip(text: str, limit: int) -> str:
    """Shorten text that has already been scrubbed (cutting first could leave half a key behind)."""
    return text if len(text) <= limit else text[:limit] + "…"
