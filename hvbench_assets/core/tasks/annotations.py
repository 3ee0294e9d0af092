"""Human ground truth (HC counts, AST/TSA action-time pairs): checked (one function per kind, called by the review
app and `hvbench annotate` alike), then appended to `annotations`, latest wins."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.tasks import actions
from hvbench_assets.core.tasks.store import ANNOTATIONS
from hvbench_assets.core.warehouse import Warehouse


class BadAnnotation(ValueError):
    """A value that is not stored: `field` names the input, `needs_confirmation` says that an explicit
    confirmation (the app's `confirm: true`, the CLI's --confirm) would let it through."""

    def __init__(self, message: str, field: str | None = None, needs_confirmation: bool = False):
        super().__init__(f"{field}: {message}" if field else message)
        self.field, self.reason, self.needs_confirmation = field, message, needs_confirmation


@dataclass(frozen=True)
class AnnotationLimits:
    max_count: int = 200  # HVBENCH_MAX_HEAD_COUNT: the largest believable head count of one clip
    confirm_ratio: float = 2.0  # a count this many times above or below L2's estimate needs a confirmation


@dataclass(frozen=True)
class ClipFacts:
    """What a check compares against: the clip's length (L0 probe) and L2's person estimate."""

    duration_s: float | None = None
    l2_people: int | None = None


def finite_number(value: Any, field: str) -> float:
    """A real, finite number (JSON number or numeric text); booleans, NaN, Infinity and words are refused."""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise BadAnnotation(f"expected a number, got {value!r}", field)
    try:
        x = float(value)
    except OverflowError:  # an integer too large for a float
        raise BadAnnotation("expected a finite number, got one too large", field) from None
    except (TypeError, ValueError):
        raise BadAnnotation(f"expected a number, got {value!r}", field) from None
    if not math.isfinite(x):
        raise BadAnnotation(f"expected a finite number, got {value!r}", field)
    return x


def check_count(value: Any, facts: ClipFacts = ClipFacts(), limits: AnnotationLimits = AnnotationLimits(),
                confirmed: bool = False) -> dict:
    """An HC head count: a whole number in 1..max_count; one more than `confirm_ratio` times off L2's estimate
    is refused unless `confirmed` (a typo such as 50 for 5 is the usual cause)."""
    x = finite_number(value, "count")
    if not x.is_integer():
        raise BadAnnotation(f"a head count is a whole number, got {value!r}", "count")
    n = int(x)
    if not 1 <= n <= limits.max_count:
        raise BadAnnotation(f"{n} is outside 1..{limits.max_count} (HVBENCH_MAX_HEAD_COUNT)", "count")
    est = facts.l2_people
    if est and est > 0 and not confirmed and (n > est * limits.confirm_ratio or n * limits.confirm_ratio < est):
        raise BadAnnotation(f"{n} differs from L2's estimate of {est} people by more than {limits.confirm_ratio:g}x; "
                            "count again, or confirm it", "count", needs_confirmation=True)
    return {"count": n}


def action_form(text: Any, field: str = "action", prefixed: bool = True) -> str:
    """The action text in the form of AST's distractors (actions.action_form), or BadAnnotation saying why not."""
    clean, problem = actions.action_form(text, prefixed)
    if problem:
        raise BadAnnotation(problem, field)
    return clean


def _second(value: Any, field: str, duration_s: float | None) -> float:
    x = finite_number(value, field)
    if x < 0:
        raise BadAnnotation(f"{x:g} s is before the clip starts", field)
    if duration_s is not None and x > duration_s:
        raise BadAnnotation(f"{x:g} s is after the end of the {duration_s:.1f} s clip", field)
    return x


def check_action(action: Any = None, start_s: Any = None, end_s: Any = None, ongoing: bool = False,
                 none: bool = False, facts: ClipFacts = ClipFacts()) -> dict:
    """An AST/TSA action-time pair: the action in the distractors' form, its start (and end, when given) inside
    the clip; or an ongoing action (text optional), or none."""
    if none:
        return {"none": True}
    if ongoing:
        return {"ongoing": True, **({"action": action_form(action, prefixed=False)} if action else {})}
    text = action_form(action)
    if start_s is None or (isinstance(start_s, str) and not start_s.strip()):
        raise BadAnnotation("the second the action starts is missing", "start_s")
    start = _second(start_s, "start_s", facts.duration_s)
    value = {"action": text, "start_s": int(round(start))}
    if end_s is not None and not (isinstance(end_s, str) and not end_s.strip()):
        end = _second(end_s, "end_s", facts.duration_s)
        if end <= start:
            raise BadAnnotation(f"the action ends at {end:g} s, not after its start at {start:g} s", "end_s")
        value["end_s"] = round(end, 2)
    return value


def clip_facts(warehouse: Warehouse, video_id: str) -> ClipFacts:
    """The clip's probed length and L2's person estimate (None where not measured yet)."""
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE
    from hvbench_assets.core.vision.tables import PERSON_COUNT

    probe = warehouse.rows(VIDEO_PROBE, video_id=video_id)
    duration = probe[0]["duration_s"] if probe and probe[0].get("status") == "ok" else None
    l2 = warehouse.rows(PERSON_COUNT, video_id=video_id) if warehouse.has_table(PERSON_COUNT.name) else []
    people = l2[0].get("person_count") if l2 and l2[0].get("status") == "ok" else None
    return ClipFacts(duration_s=duration, l2_people=int(people) if people is not None else None)


# kept for callers that build values directly (tests, scripts); both go through the checks above
def count_value(n: Any, facts: ClipFacts = ClipFacts(), limits: AnnotationLimits = AnnotationLimits(),
                confirmed: bool = False) -> dict:
    return check_count(n, facts, limits, confirmed)


def action_value(action: str | None = None, start_s: Any = None, ongoing: bool = False, none: bool = False,
                 end_s: Any = None, facts: ClipFacts = ClipFacts()) -> dict:
    return check_action(action, start_s, end_s, ongoing=ongoing, none=none, facts=facts)


def record(warehouse: Warehouse, video_id: str, kind: str, value: Mapping[str, Any], track_id: int | None = None,
           annotator: str = "cli") -> str:
    """Append one annotation; returns its id."""
    if kind not in ("count", "action"):
        raise BadAnnotation(f"unknown annotation kind {kind!r} (count | action)")
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    ann_id = "a" + hashlib.sha256(json.dumps([video_id, kind, track_id, value, annotator, now.isoformat()],
                                             sort_keys=True).encode()).hexdigest()[:15]
    warehouse.replace(ANNOTATIONS, {"annotation_id": ann_id}, [{
        "video_id": video_id, "kind": kind, "track_id": track_id, "value": dict(value), "annotator": annotator,
        "created_at": now,
    }])
    return ann_id


def latest(warehouse: Warehouse, video_id: str, kind: str, track_ids: tuple[int, ...] | None = None) -> dict | None:
    """The newest annotation of `kind` for the clip (for actions: of one of `track_ids`)."""
    rows = warehouse.rows(ANNOTATIONS, order_by="created_at DESC", video_id=video_id, kind=kind)
    for r in rows:
        if track_ids is None or r["track_id"] is None or r["track_id"] in track_ids:
            return r
    return None


def clip_exists(warehouse: Warehouse, video_id: str) -> bool:
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE

    return warehouse.count(VIDEO_PROBE, video_id=video_id) > 0
