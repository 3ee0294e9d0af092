"""The review and adjudication API: /api/next/{queue} (the next item), /api/reveal (the proposed answer after a
blind pick), /api/decisions (store a decision, answer with the next item) and /api/undo. What may be decided and
what comes next are core/curation/decisions.py's rules; this module reads the values they take and answers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.decisions import ADJUDICATE, PICK, queue_of, rule
from hvbench_assets.core.curation.store import BadDecision, record_decision, undo_decision
from hvbench_assets.core.tasks.store import question_content_hash
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.http import Refused, number, skipped, text
from hvbench_assets.review.items import NEXT, adjudication_item, review_item
from hvbench_assets.review.queues import State, adjudicators_of, counters, flag_of, flags_open

FIELDS = (("blind_choice", 8), ("corrected_answer", 8), ("corrected_text", 2000), ("reason", 40),
          ("reason_text", 2000), ("content_hash", 100))  # the decision's text fields and their longest length


def api_next(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    who = app.need_reviewer(request)
    kind = request.path_params["queue"]
    if kind not in NEXT:
        raise Refused(404, f"no queue {kind!r}")
    return JSONResponse({"item": NEXT[kind](app, who, skipped(request))})


def revealed(q: dict[str, Any], s: State) -> dict[str, Any]:
    """The proposed answer, and on a flagged question the models' answers, shown once the reviewer has picked."""
    flag = flag_of(s, q["question_id"], picked=True)
    return {"answer": q["answer"], "answer_text": q["answer_text"], **({"flag": flag} if flag else {})}


def unchanged(q: dict[str, Any], content_hash: Any) -> None:
    if content_hash != question_content_hash(q):
        raise Refused(409, f"question {q['question_id']} changed since it was shown; reload")


def api_reveal(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    app.need_reviewer(request)
    q = app.question_row(str(data.get("question_id")))
    unchanged(q, data.get("content_hash"))
    return JSONResponse(revealed(q, app.load_state()))


def api_decide(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    who = app.need_reviewer(request)
    q = app.question_row(text(data, "question_id", 200, required=True))
    action = text(data, "action", 20, required=True)
    fields = {f: text(data, f, n) for f, n in FIELDS}
    order = data.get("shown_order")
    if order is not None and not (isinstance(order, list) and len(order) <= 26
                                  and all(isinstance(x, str) and len(x) <= 8 for x in order)):
        raise Refused(400, "shown_order: expected a list of option letters")
    seconds = number(data.get("seconds_spent"), "seconds_spent", 0, 86400)
    watched = number(data.get("watched_s"), "watched_s", 0, 86400)
    request_id = text(data, "request_id", 100)
    if action == PICK:
        unchanged(q, fields["content_hash"])
    qid = q["question_id"]
    s = app.load_state() if action in (PICK, ADJUDICATE) else None  # only these two rules read the state
    ruling = rule(who, action, qid, blind_choice=fields["blind_choice"], answer=q["answer"],
                  flagged=s is not None and qid in flags_open(s), state=s["states"].get(qid) if s else None,
                  adjudicators=adjudicators_of(s).get(qid) if s else None)
    if ruling.refused:
        raise Refused(403, ruling.refused)
    if ruling.reveal:
        return JSONResponse({"stored": False, **revealed(q, s)})
    try:
        d = record_decision(app.wh, q, who, ruling.action, shown_order=order, seconds_spent=seconds,
                            watched_s=watched, request_id=request_id, **fields)
    except BadDecision as exc:
        raise Refused(409 if "changed since" in str(exc) else 400, str(exc)) from None
    nxt = NEXT[ruling.next_queue](app, who, skipped(request))
    return JSONResponse({"stored": True, "decision_id": d["decision_id"], "duplicate": d["duplicate"],
                         "action": ruling.action, "next": nxt})


def api_undo(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    """Take back one's latest decision on a question; the answer is that question again, to decide anew."""
    who = app.need_reviewer(request)
    try:
        d = undo_decision(app.wh, who, text(data, "decision_id", 40, required=True))
    except BadDecision as exc:
        raise Refused(409, str(exc)) from None
    q = app.question_row(d["question_id"])
    queue = queue_of(d["action"])
    s = app.load_state()
    leases.take(app.wh, who, queue, [{"question_id": q["question_id"]}], lambda i: True, app.cfg.lease_minutes)
    counts = counters(app, s, who, queue == ADJUDICATE)
    item = adjudication_item(app, {"question_id": q["question_id"]}, s, counts) if queue == ADJUDICATE else \
        review_item(q, who, counts, s)
    return JSONResponse({"undone": d["decision_id"], "item": item})


def routes(app: AppState) -> list[Route]:
    return [Route("/api/next/{queue}", app.json(api_next)),
            Route("/api/reveal", app.json(api_reveal), methods=["POST"]),
            Route("/api/decisions", app.json(api_decide), methods=["POST"]),
            Route("/api/undo", app.json(api_undo), methods=["POST"])]
