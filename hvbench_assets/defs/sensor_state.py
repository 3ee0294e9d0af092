"""A sensor's state kept out of its cursor: the cursor is a 16-character token, the state it names lives in the
Dagster instance's key-value store (`daemon_cursor_storage`, where Dagster keeps its daemons' own cursors).

The sensor page shows the token instead of a JSON blob that grows with every file. Dagster still commits the
cursor only when a tick succeeds, so the token keeps that guarantee; a state is found by the token a tick saw,
and the last few are kept so a tick that failed after saving leaves the previous one readable. A reset cursor (or
a token whose state is gone) reads as no state: the sensors then fall back on what the warehouse says is done.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import dagster as dg

KEY_PREFIX = "hvbench/sensor_state/"
KEEP = 4  # states kept per sensor (the current one and those of a few ticks before)


def _has_instance(context: dg.SensorEvaluationContext) -> bool:
    try:
        context.instance  # noqa: B018
        return True
    except dg.DagsterInvariantViolationError:  # built without an instance (a unit test): nothing is stored
        return False


def _stored(instance: dg.DagsterInstance, name: str) -> dict[str, Any]:
    key = KEY_PREFIX + name
    raw = instance.daemon_cursor_storage.get_cursor_values({key}).get(key)
    return json.loads(raw) if raw else {}


def read_state(instance: dg.DagsterInstance | None, name: str, cursor: str | None, default: Any = None) -> Any:
    """Sensor `name`'s state saved under `cursor`; `default` when there is none (a first tick, a reset cursor)."""
    if not cursor:
        return default
    if cursor[:1] in "{[":  # a cursor written before states moved out of it (or without an instance)
        return json.loads(cursor)
    return _stored(instance, name).get(cursor, default) if instance is not None else default


def load_state(context: dg.SensorEvaluationContext, name: str, default: Any) -> Any:
    """The state of the sensor evaluated in `context`, saved under its cursor."""
    return read_state(context.instance if _has_instance(context) else None, name, context.cursor, default)


def save_state(context: dg.SensorEvaluationContext, name: str, state: Any) -> str:
    """Stores `state`; the cursor to return (a digest of the state, so an unchanged state writes nothing)."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    if not _has_instance(context):
        return text  # nowhere to keep it: the state itself is the cursor
    token = hashlib.sha256(text.encode()).hexdigest()[:16]
    stored = _stored(context.instance, name)
    if list(stored)[-1:] != [token]:  # newest last, so the one in use is never the one dropped
        stored.pop(token, None)
        stored = {**dict(list(stored.items())[-(KEEP - 1):]), token: state}
        context.instance.daemon_cursor_storage.set_cursor_values({KEY_PREFIX + name: json.dumps(stored)})
    return token
