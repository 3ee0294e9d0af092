"""/api/annotations: a head count (HC) or an action's time (AST, TSA) for a clip, checked against what the clip's
labels allow (core/tasks/annotations.py), answered with the next clip to annotate."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hvbench_assets.core.tasks import annotations
from hvbench_assets.core.tasks.catalog import ANNOTATED
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.http import Refused, number, skipped
from hvbench_assets.review.items import next_annotation


def api_annotate(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    who = app.need_reviewer(request)
    q = app.question_row(str(data.get("question_id")))
    for name in ("seconds_spent", "watched_s"):  # not stored, but a client sending nonsense hears so
        number(data.get(name), name, 0, 86400)
    kind = ANNOTATED.get(q["abbrev"])
    if kind is None:
        raise Refused(400, f"{q['question_id']} ({q['abbrev']}) takes no annotation")
    facts = annotations.clip_facts(app.wh, q["video_id"])
    try:
        if kind == "count":
            value, track = annotations.check_count(data.get("count"), facts, app.cfg.annotation_limits,
                                                   confirmed=data.get("confirm") is True), None
        else:
            value = annotations.check_action(data.get("action"), data.get("start_s"), data.get("end_s"),
                                             ongoing=data.get("ongoing") is True, none=data.get("none") is True,
                                             facts=facts)
            track = int((q.get("target_track_ids") or [None])[0])
    except annotations.BadAnnotation as exc:
        return JSONResponse({"error": str(exc), "field": exc.field, "reason": exc.reason,
                             "needs_confirmation": exc.needs_confirmation}, status_code=400)
    ann = annotations.record(app.wh, q["video_id"], kind, value, track_id=track, annotator=who)
    return JSONResponse({"annotation_id": ann, "value": value,
                         "next": next_annotation(app, who, skipped(request))})


def routes(app: AppState) -> list[Route]:
    return [Route("/api/annotations", app.json(api_annotate), methods=["POST"])]
