"""The review web app (`hvbench review`): annotation queue, blind review queue, adjudication list,
agreement, and a page per question. Starlette + Jinja2; every read and write goes through `Warehouse`
(flock-serialised, so Dagster runs may write at the same time).

Who is who: on a loopback address a reviewer types a name (kept in a cookie). On any other address every
request needs a per-reviewer token (`hvbench review-token NAME`), and the name comes from the token only.
Videos are served by question id: the path is looked up in `questions`, never taken from the request.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from hvbench_assets.core.curation import leases, tokens
from hvbench_assets.core.curation.agreement import kappa_table, latest_reviews, reviewer_accuracy
from hvbench_assets.core.curation.live import LiveState, decode
from hvbench_assets.core.curation.media import QUESTION_ID, MediaRefused, question_video
from hvbench_assets.core.curation.progress import Progress, progress
from hvbench_assets.core.curation.queue import adjudication_list, annotation_queue, review_queue, shown_order
from hvbench_assets.core.curation.review_stats import (DEFAULT_FAST_FLOOR_S, decision_times, fast_decisions,
                                                       no_edit_shares)
from hvbench_assets.core.curation.state import REASONS, STATES, is_question, state_counts
from hvbench_assets.core.curation.store import BadDecision, record_decision, undo_decision
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.tasks import annotations
from hvbench_assets.core.tasks.catalog import ANNOTATED, TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.settings_table import open_warehouse

HERE = Path(__file__).parent
NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
QUESTIONS_PER_PAGE = 500
TOKEN_COOKIE, NAME_COOKIE = "hvbench_token", "hvbench_reviewer"
MEDIA_CACHE_S = 30.0


@dataclass(frozen=True)
class ReviewConfig:
    warehouse: Path
    data_dir: Path
    require_token: bool = False
    excluded: frozenset[str] = frozenset()
    roots: tuple[Path, ...] = ()  # folders besides data_dir that question videos may lie in
    dagster_url: str = "http://127.0.0.1:3000"
    host: str = "127.0.0.1"  # the bound address; on loopback only its names are accepted in the Host header
    annotation_limits: annotations.AnnotationLimits = annotations.AnnotationLimits()
    max_body_bytes: int = 1_000_000  # HVBENCH_REVIEW_MAX_BODY: larger request bodies get 413 before anything is read
    lease_minutes: float = leases.DEFAULT_LEASE_MINUTES  # HVBENCH_REVIEW_LEASE_MINUTES
    fast_floor_s: float = DEFAULT_FAST_FLOOR_S  # HVBENCH_REVIEW_FAST_S: quicker than this, video unplayed: marked
    extra: dict[str, Any] = field(default_factory=dict)


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class BodyLimit:
    """ASGI middleware, outside the app's routes: a body over `limit` bytes is refused with 413 before a byte of it
    is read or parsed and before a token is looked up, by its Content-Length (a write without one gets 411); the
    bytes are counted as they arrive too, in case a client sends more than it announced."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is None and scope.get("method") in ("POST", "PUT", "PATCH"):  # a size known before reading
            return await JSONResponse({"error": "send the body with a Content-Length"}, status_code=411)(
                scope, receive, send)
        if length is not None and (not length.strip().isdigit() or int(length) > self.limit):
            status, msg = (413, f"the request body is larger than {self.limit} bytes") if length.strip().isdigit() \
                else (400, "bad Content-Length")
            return await JSONResponse({"error": msg}, status_code=status)(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise Refused(413, f"the request body is larger than {self.limit} bytes")
            return message

        await self.app(scope, limited, send)



def create_app(cfg: ReviewConfig) -> Starlette:
    wh = open_warehouse(cfg.warehouse)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    live = LiveState(cfg.excluded)

    def load_state(_wh: Warehouse) -> dict[str, Any]:
        """What store.load_state returns plus `hashes`, `states` and `reviewed` (curate's rows), kept in memory and
        refreshed by what changed since the last request (core/curation/live.py)."""
        return live.refresh(_wh).state()

    # -- identity -------------------------------------------------------------------------------
    def reviewer_of(request: Request) -> str | None:
        if "reviewer" in request.scope.setdefault("state", {}):
            return request.scope["state"]["reviewer"]
        request.scope["state"]["reviewer"] = who = _identify(request)
        return who

    def _identify(request: Request) -> str | None:
        if cfg.require_token:
            auth = request.headers.get("authorization", "")
            token = auth[7:].strip() if auth.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE)
            return tokens.reviewer_for(wh, token)
        name = request.cookies.get(NAME_COOKIE, "")
        return name if NAME.match(name) else None

    def need_reviewer(request: Request) -> str:
        who = reviewer_of(request)
        if who is None:
            raise Refused(401, "a valid reviewer token is required" if cfg.require_token else
                          "say who you are first (name field on the start page)")
        return who

    async def body(request: Request) -> dict[str, Any]:
        # JSON only: a cross-site form cannot send it without a CORS preflight this server never answers
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise Refused(415, "send JSON (Content-Type: application/json)")
        try:  # Python's parser takes NaN and Infinity: every numeric field is checked with finite_number
            data = json.loads(await request.body())
        except ValueError:
            raise Refused(400, "the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise Refused(400, "the body must be a JSON object")
        return data

    def page(request: Request, name: str, **ctx) -> Response:
        who = reviewer_of(request)
        if who is None and cfg.require_token:
            return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
        return templates.TemplateResponse(request, name, {"reviewer": who, "require_token": cfg.require_token,
                                                          "reasons": REASONS, **ctx})

    def question_row(qid: str) -> dict[str, Any]:
        if not QUESTION_ID.match(qid or ""):
            raise Refused(400, f"{qid!r} is not a question id")
        rows = wh.rows(QUESTIONS, question_id=qid)
        if not rows:
            raise Refused(404, f"no question {qid}")
        return rows[0]

    # -- items as the browser gets them ---------------------------------------------------------
    def review_item(q: dict[str, Any], reviewer: str, counts: Progress, chash: str | None = None) -> dict[str, Any]:
        by = {o["letter"]: o for o in q["options"]}
        chash = chash or question_content_hash(q)
        return {"question_id": q["question_id"], "content_hash": chash, "task": q["task"],
                "abbrev": q["abbrev"], "video_id": q["video_id"], "question": q["question"],
                "options": [{"letter": ltr, "text": by[ltr]["text"]} for ltr in shown_order(q, reviewer, chash)],
                "video": f"/media/{q['question_id']}", "remaining": counts.left, "done": counts.done,
                "guideline": guideline(q["abbrev"])}

    # what pages derive from the state, kept until a part of the state they read changes (live.Snapshot.memo):
    # a reload, another reviewer's page or the stats page recompute nothing until a decision, assignment or
    # question comes in, and a decision leaves the annotation queue and the question indexes as they were
    def my_queue(s: dict[str, Any], reviewer: str) -> list[dict[str, Any]]:
        reviewable = s["memo"]("reviewable", lambda: [q for q in s["questions"] if is_question(q)], ("questions",))
        return s["memo"](("review_queue", reviewer), lambda: review_queue(
            reviewable, s["decisions"], s["assignments"], cfg.excluded, reviewer, s["annotations"],
            states=s["states"], hashes=s["hashes"], presorted=True))

    def my_disputes(s: dict[str, Any], reviewer: str | None) -> list[dict[str, Any]]:
        return s["memo"](("adjudication_list", reviewer), lambda: adjudication_list(
            s["questions"], s["decisions"], s["assignments"], cfg.excluded, reviewer, s["annotations"],
            reviewed=s["reviewed"]), ("reviewed", "assignments"))  # given `reviewed`, it reads nothing else

    def assigned_for_review(s: dict[str, Any]) -> set[str]:
        return s["memo"]("assigned", lambda: {a["question_id"] for a in s["assignments"]
                                              if (a.get("role") or "review") == "review"}, ("assignments",))

    def counters(s: dict[str, Any], reviewer: str, adjudicating: bool) -> Progress:
        """Done and left for the progress bar, from the state and the leases as they are now (never carried over
        from the last item: an undo, a rejection or an adjudication shows what a reload would)."""
        queue = "adjudicate" if adjudicating else "review"
        held = leases.held(wh, reviewer, queue) - (set() if adjudicating else assigned_for_review(s))
        return s["memo"](("progress", reviewer, adjudicating, frozenset(held)), lambda: progress(
            reviewer, my_disputes(s, reviewer) if adjudicating else my_queue(s, reviewer), s["decisions"],
            adjudicating=adjudicating, held_by_others=held))

    def annotation_items(s: dict[str, Any]) -> list[dict[str, Any]]:
        return s["memo"]("annotation_queue", lambda: annotation_queue(s["questions"], s["annotations"]),
                         ("questions", "annotations"))

    def next_review(reviewer: str, skip: set[str]) -> dict[str, Any] | None:
        s = load_state(wh)
        queue = [q for q in my_queue(s, reviewer) if q["question_id"] not in skip]
        assigned = assigned_for_review(s)
        q, _ = leases.take(wh, reviewer, "review", queue, lambda q: q["question_id"] not in assigned, cfg.lease_minutes)
        return review_item(q, reviewer, counters(s, reviewer, False), s["hashes"][q["question_id"]]) if q else None

    def decisions_on(s: dict[str, Any], qid: str) -> list[dict[str, Any]]:
        """The decisions on one question, in the state's order."""
        def index() -> dict[str, list[dict[str, Any]]]:
            out: dict[str, list[dict[str, Any]]] = {}
            for d in s["decisions"]:
                out.setdefault(d["question_id"], []).append(d)
            return out
        return s["memo"]("decisions_by_question", index, ("decisions",)).get(qid, [])

    def adjudication_item(row: dict[str, Any], s: dict[str, Any], counts: Progress) -> dict[str, Any]:
        qid = row["question_id"]
        q = s["by_id"].get(qid) or question_row(qid)  # the state was read in this request: it is current
        chash = s["hashes"].get(qid) or question_content_hash(q)
        votes = {}
        for d in decisions_on(s, qid):
            if d["content_hash"] == chash and d["action"] != "adjudicate":
                votes[d["reviewer"]] = {k: d[k] for k in ("action", "blind_choice", "corrected_answer",
                                                          "corrected_text", "reason", "reason_text")}
        return {"question_id": q["question_id"], "content_hash": chash, "task": q["task"], "abbrev": q["abbrev"],
                "video_id": q["video_id"], "question": q["question"], "answer": q["answer"],
                "options": [{"letter": o["letter"], "text": o["text"]} for o in q["options"]],
                "votes": votes, "video": f"/media/{q['question_id']}", "remaining": counts.left,
                "done": counts.done, "guideline": guideline(q["abbrev"])}

    def next_adjudication(reviewer: str, skip: set[str]) -> dict[str, Any] | None:
        s = load_state(wh)
        rows = [r for r in my_disputes(s, reviewer) if r["question_id"] not in skip]
        row, _ = leases.take(wh, reviewer, "adjudicate", rows, lambda r: True, cfg.lease_minutes)
        return adjudication_item(row, s, counters(s, reviewer, True)) if row is not None else None

    def next_annotation(reviewer: str, skip: set[str]) -> dict[str, Any] | None:
        s = load_state(wh)
        items = [i for i in annotation_items(s) if i["question_id"] not in skip]
        first, remaining = leases.take(wh, reviewer, "annotate", items, lambda i: True, cfg.lease_minutes)
        if first is None:
            return None
        item = dict(first)
        item.update(video=f"/media/{item['question_id']}", remaining=remaining,
                    done=s["memo"](("annotated_by", reviewer),
                                   lambda: sum(1 for a in s["annotations"] if a.get("annotator") == reviewer),
                                   ("annotations",)),
                    guideline=" ".join(dict.fromkeys(guideline(t) for t in item["tasks"])))
        return item

    def skipped(request: Request) -> set[str]:
        return {s for s in request.query_params.get("skip", "").split(",") if s}

    # -- pages ----------------------------------------------------------------------------------
    def home(request: Request) -> Response:
        who = reviewer_of(request)
        with wh.batch():  # one lock and attach for the state and the flow's few rows
            s = load_state(wh)
            recent = flow(wh, s)
        ctx = {"counts": s["memo"]("state_counts", lambda: state_counts(s["reviewed"]), ("reviewed",)), "states": STATES,
               "flow": recent, "annotation_items": len(annotation_items(s)), "excluded": sorted(cfg.excluded)}
        if who:
            ctx["review_items"] = len(my_queue(s, who))
            ctx["adjudication_items"] = len(my_disputes(s, who))
        return page(request, "home.html", **ctx)

    def review_page(request: Request) -> Response:
        who = reviewer_of(request)
        if who is None:
            return RedirectResponse("/", status_code=303) if not cfg.require_token else page(request, "home.html")
        again = request.query_params.get("question")
        if again:  # review one question again (from its page): the new decision replaces this reviewer's earlier one
            q = question_row(again)
            if not is_question(q):
                raise Refused(400, f"{again} has no question text yet (it waits for an annotation)")
            with wh.batch():
                counts = counters(load_state(wh), who, False)
            return page(request, "review.html", item=review_item(q, who, counts), mode="review")
        with wh.batch():  # one lock and attach for the state and the lease (the template is made after)
            item = next_review(who, set())
        return page(request, "review.html", item=item, mode="review")

    def adjudicate_page(request: Request) -> Response:
        who = reviewer_of(request)
        if who is None:
            return RedirectResponse("/", status_code=303) if not cfg.require_token else page(request, "home.html")
        with wh.batch():
            item = next_adjudication(who, set())
        return page(request, "review.html", item=item, mode="adjudicate")

    def annotate_page(request: Request) -> Response:
        who = reviewer_of(request)
        if who is None:
            return RedirectResponse("/", status_code=303) if not cfg.require_token else page(request, "home.html")
        with wh.batch():
            item = next_annotation(who, set())
        return page(request, "annotate.html", item=item)

    def question_page(request: Request) -> Response:
        qid = request.path_params["question_id"]
        if reviewer_of(request) is None and cfg.require_token:
            return page(request, "home.html")
        with wh.batch():  # one lock and attach for the state and the ~20 reads of the provenance chain
            q = question_row(qid)
            s = load_state(wh)
            explanation = explain(wh, qid)
        family = TASK_BY_ABBREV.get(q["abbrev"])
        links = [(f"{a} / {q['video_id']}", f"{cfg.dagster_url.rstrip('/')}/assets/{a}?view=partitions&partition="
                  f"{quote(q['video_id'])}") for a in ([family.asset] if family else []) + ["human_tracks", "video_probe"]]
        links.append(("reviewed_questions", f"{cfg.dagster_url.rstrip('/')}/assets/reviewed_questions"))
        return page(request, "question.html", q=q, reviewed=s["states"].get(qid), explanation=explanation, links=links,
                    decisions=decisions_on(s, qid),
                    content_hash=question_content_hash(q))

    def questions_page(request: Request) -> Response:
        s = load_state(wh)
        state, task = request.query_params.get("state"), request.query_params.get("task")
        rows = [r for r in s["reviewed"] if (not state or r["state"] == state) and (not task or r["abbrev"] == task)]
        try:
            start = max(0, int(request.query_params.get("from") or 0))
        except ValueError:
            raise Refused(400, "from= takes a row number") from None
        shown = rows[start:start + QUESTIONS_PER_PAGE]  # 20,000 rows would be a 10 MB page
        text = {r["question_id"]: s["by_id"][r["question_id"]]["question"] for r in shown}
        return page(request, "questions.html", rows=shown, total=len(rows), start=start, per_page=QUESTIONS_PER_PAGE,
                    text=text, state=state, task=task)

    def agreement_page(request: Request) -> Response:
        with wh.batch():  # one lock and attach for the state and the clip lengths
            s = load_state(wh)
            durations = clip_durations(wh)

        def agreement() -> dict[str, Any]:
            known = {"hashes": s["hashes"], "by_id": s["by_id"]}
            known["reviews"] = latest_reviews(s["questions"], s["decisions"], **known)  # once for the three tables
            return {"blind": kappa_table(s["questions"], s["decisions"], "blind", **known),
                    "verdict": kappa_table(s["questions"], s["decisions"], "verdict", **known),
                    "accuracy": reviewer_accuracy(s["questions"], s["decisions"], s["reviewed"], **known),
                    "disputed": my_disputes(s, None), "assignments": len(s["assignments"])}

        timing = s["memo"](("timing", cfg.fast_floor_s, tuple(sorted(durations.items()))),
                           lambda: timing_stats(s, s["reviewed"], durations, cfg.fast_floor_s), ("decisions", "reviewed"))
        return page(request, "agreement.html", **s["memo"]("agreement", agreement), **timing)

    def login(request: Request, data: dict[str, Any] | None) -> Response:
        if request.method == "GET":
            return templates.TemplateResponse(request, "login.html", {"reviewer": None, "next": request.query_params.get("next", "/"),
                                                                      "require_token": cfg.require_token})
        if cfg.require_token:
            who = tokens.reviewer_for(wh, str(data.get("token") or ""))
            if who is None:
                raise Refused(401, "unknown or revoked token")
            resp = JSONResponse({"reviewer": who})
            resp.set_cookie(TOKEN_COOKIE, str(data["token"]), httponly=True, samesite="strict", max_age=30 * 86400)
            return resp
        name = str(data.get("name") or "").strip()
        if not NAME.match(name):
            raise Refused(400, "a name is one word of letters, digits, . _ - @ (at most 64)")
        resp = JSONResponse({"reviewer": name})
        resp.set_cookie(NAME_COOKIE, name, samesite="strict", max_age=365 * 86400)
        return resp

    # -- API ------------------------------------------------------------------------------------
    def api_next(request: Request) -> Response:
        who = need_reviewer(request)
        kind = request.path_params["queue"]
        item = {"review": lambda: next_review(who, skipped(request)),
                "adjudicate": lambda: next_adjudication(who, skipped(request)),
                "annotate": lambda: next_annotation(who, skipped(request))}.get(kind)
        if item is None:
            raise Refused(404, f"no queue {kind!r}")
        return JSONResponse({"item": item()})

    def api_reveal(request: Request, data: dict[str, Any] | None) -> Response:
        need_reviewer(request)
        q = question_row(str(data.get("question_id")))
        if data.get("content_hash") != question_content_hash(q):
            raise Refused(409, f"question {q['question_id']} changed since it was shown; reload")
        return JSONResponse({"answer": q["answer"], "answer_text": q["answer_text"]})

    def api_decide(request: Request, data: dict[str, Any] | None) -> Response:
        who = need_reviewer(request)
        q = question_row(_text(data, "question_id", 200, required=True))
        action = _text(data, "action", 20, required=True)
        fields = {f: _text(data, f, n) for f, n in (("blind_choice", 8), ("corrected_answer", 8), ("corrected_text", 2000),
                                                     ("reason", 40), ("reason_text", 2000), ("content_hash", 100))}
        order = data.get("shown_order")
        if order is not None and not (isinstance(order, list) and len(order) <= 26
                                      and all(isinstance(x, str) and len(x) <= 8 for x in order)):
            raise Refused(400, "shown_order: expected a list of option letters")
        seconds = _number(data.get("seconds_spent"), "seconds_spent", 0, 86400)
        watched = _number(data.get("watched_s"), "watched_s", 0, 86400)
        request_id = _text(data, "request_id", 100)
        if action == "pick":  # one key: the blind pick is stored as an accept when it is the proposed answer
            if fields["content_hash"] != question_content_hash(q):
                raise Refused(409, f"question {q['question_id']} changed since it was shown; reload")
            if fields["blind_choice"] != q["answer"]:
                return JSONResponse({"stored": False, "answer": q["answer"], "answer_text": q["answer_text"]})
            action = "accept"
        if action == "adjudicate":
            s = load_state(wh)
            allowed = {r["question_id"] for r in my_disputes(s, who)}
            if q["question_id"] not in allowed:
                raise Refused(403, f"{who} may not adjudicate {q['question_id']}: not disputed, or {who} reviewed it")
        try:
            d = record_decision(wh, q, who, action, shown_order=order, seconds_spent=seconds, watched_s=watched,
                                request_id=request_id, **fields)
        except BadDecision as exc:
            raise Refused(409 if "changed since" in str(exc) else 400, str(exc)) from None
        skip = skipped(request)
        nxt = next_adjudication(who, skip) if action == "adjudicate" else next_review(who, skip)
        return JSONResponse({"stored": True, "decision_id": d["decision_id"], "duplicate": d["duplicate"],
                             "action": action, "next": nxt})

    def api_undo(request: Request, data: dict[str, Any] | None) -> Response:
        """Take back one's latest decision on a question; the answer is that question again, to decide anew."""
        who = need_reviewer(request)
        try:
            d = undo_decision(wh, who, _text(data, "decision_id", 40, required=True))
        except BadDecision as exc:
            raise Refused(409, str(exc)) from None
        q = question_row(d["question_id"])
        queue = "adjudicate" if d["action"] == "adjudicate" else "review"
        s = load_state(wh)
        leases.take(wh, who, queue, [{"question_id": q["question_id"]}], lambda i: True, cfg.lease_minutes)
        counts = counters(s, who, queue == "adjudicate")
        item = adjudication_item({"question_id": q["question_id"]}, s, counts) if queue == "adjudicate" else \
            review_item(q, who, counts, s["hashes"].get(q["question_id"]))
        return JSONResponse({"undone": d["decision_id"], "item": item})

    def api_annotate(request: Request, data: dict[str, Any] | None) -> Response:
        who = need_reviewer(request)
        q = question_row(str(data.get("question_id")))
        for name in ("seconds_spent", "watched_s"):  # not stored, but a client sending nonsense hears so
            _number(data.get(name), name, 0, 86400)
        kind = ANNOTATED.get(q["abbrev"])
        if kind is None:
            raise Refused(400, f"{q['question_id']} ({q['abbrev']}) takes no annotation")
        facts = annotations.clip_facts(wh, q["video_id"])
        try:
            if kind == "count":
                value, track = annotations.check_count(data.get("count"), facts, cfg.annotation_limits,
                                                       confirmed=data.get("confirm") is True), None
            else:
                value = annotations.check_action(data.get("action"), data.get("start_s"), data.get("end_s"),
                                                 ongoing=data.get("ongoing") is True, none=data.get("none") is True,
                                                 facts=facts)
                track = int((q.get("target_track_ids") or [None])[0])
        except annotations.BadAnnotation as exc:
            return JSONResponse({"error": str(exc), "field": exc.field, "reason": exc.reason,
                                 "needs_confirmation": exc.needs_confirmation}, status_code=400)
        ann = annotations.record(wh, q["video_id"], kind, value, track_id=track, annotator=who)
        return JSONResponse({"annotation_id": ann, "value": value, "next": next_annotation(who, skipped(request))})

    found: dict[str, tuple[float, Path]] = {}  # question id -> (when looked up, file)

    def media(request: Request) -> Response:
        """A browser fetches a video in several range requests: the first (no range, or from byte 0) looks the
        path up; the later ones reuse it for MEDIA_CACHE_S, so they do not each take the warehouse lock while
        the reviewer's next decision waits."""
        if cfg.require_token:
            need_reviewer(request)
        qid = request.path_params["question_id"]
        hit = found.get(qid)
        first = re.match(r"bytes=0*-", request.headers.get("range", "bytes=0-").strip()) is not None
        if first or hit is None or time.monotonic() - hit[0] > MEDIA_CACHE_S or not hit[1].is_file():
            try:
                with wh.batch():
                    hit = found[qid] = (time.monotonic(), question_video(wh, qid, cfg.data_dir, cfg.roots))
            except MediaRefused as exc:
                raise Refused(404, str(exc)) from None
            if len(found) > 10_000:
                found.clear()
        return FileResponse(hit[1], media_type="video/mp4")

    def with_body(handler, identify: bool = True):
        """Warehouse calls block (they wait for the file lock while a Dagster run writes), so every handler runs
        in the thread pool; only reading the JSON body happens on the event loop, after the reviewer is known
        (an unknown client's body is never parsed)."""
        async def endpoint(request: Request) -> Response:
            if identify and request.method == "POST":
                await run_in_threadpool(need_reviewer, request)
            data = await body(request) if request.method == "POST" else None
            return await run_in_threadpool(batched, handler, request, data)
        return endpoint

    def batched(handler, *args):
        """A decision and the next item read and write through one warehouse connection (one open of the file
        instead of eight): most of the time between a key press and the next item on a DuckDB file."""
        with wh.batch():
            return handler(*args)

    async def next_endpoint(request: Request) -> Response:
        return await run_in_threadpool(batched, api_next, request)

    async def refused(request: Request, exc: Refused) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.startswith("/media/") or exc.status != 404:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return templates.TemplateResponse(request, "error.html", {"message": exc.message, "reviewer": None},
                                          status_code=exc.status)

    routes = [
        Route("/", home), Route("/review", review_page), Route("/adjudicate", adjudicate_page),
        Route("/annotate", annotate_page), Route("/agreement", agreement_page),
        Route("/questions", questions_page), Route("/questions/{question_id}", question_page),
        Route("/login", with_body(login, identify=False), methods=["GET", "POST"]),
        Route("/media/{question_id:path}", media),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/next/{queue}", next_endpoint), Route("/api/reveal", with_body(api_reveal), methods=["POST"]),
        Route("/api/decisions", with_body(api_decide), methods=["POST"]),
        Route("/api/undo", with_body(api_undo), methods=["POST"]),
        Route("/api/annotations", with_body(api_annotate), methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    # without tokens, a page from another site that rebinds its DNS name to 127.0.0.1 must not reach the app
    hosts = ["*"] if cfg.require_token else sorted({"127.0.0.1", "localhost", "::1", "[::1]", cfg.host})
    warmed = threading.Event()

    def warm_up() -> None:
        try:
            load_state(wh)
        except Exception:  # noqa: BLE001 (the first request reads again and answers with the error)
            logging.getLogger(__name__).exception("review app: reading the warehouse at start failed")
        finally:
            warmed.set()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        """The review state is read in the background as the server starts (1-3 s at 20,000 questions): the port
        opens at once and a request arriving meanwhile waits only for the rest of that read (live.py's lock)."""
        app.state.warmed, app.state.live = warmed, live
        threading.Thread(target=warm_up, name="review-warm-up", daemon=True).start()
        yield

    return Starlette(routes=routes, exception_handlers={Refused: refused}, lifespan=lifespan,
                     middleware=[Middleware(BodyLimit, limit=cfg.max_body_bytes),
                                 Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])


def _number(value: Any, name: str, low: float, high: float) -> float | None:
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


def _text(data: dict[str, Any], name: str, max_len: int, required: bool = False) -> str | None:
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


def guideline(abbrev: str | None) -> str:
    family = TASK_BY_ABBREV.get(abbrev or "")
    return family.guideline if family else ""


def clip_durations(wh: Warehouse) -> dict[str, float]:
    """video_id -> clip seconds (video_probe's two columns only: its JSON columns are never decoded)."""
    from hvbench_assets.core.ingest.tables import VIDEO_PROBE

    if not wh.has_table(VIDEO_PROBE.name):
        return {}
    return {r["video_id"]: r["duration_s"] for r in wh.query(
        f'SELECT video_id, duration_s FROM "{VIDEO_PROBE.name}" WHERE duration_s > 0')}


def timing_stats(s: dict[str, list], reviewed: list[dict], durations: dict[str, float],
                 floor_s: float) -> dict[str, Any]:
    """Seconds per decision, too-fast decisions and the no-edit share (the stats page and `hvbench review-stats`)."""
    from hvbench_assets.core.tasks.catalog import TASKS

    return {"times": decision_times(s["decisions"], durations, floor_s),
            "fast": fast_decisions(s["decisions"], durations, floor_s), "fast_floor_s": floor_s,
            "no_edit": no_edit_shares(reviewed, s["decisions"], [f.abbrev for f in TASKS if f.descriptive])}


def explain(wh: Warehouse, question_id: str) -> tuple[dict[str, Any], str] | None:
    """The provenance chain from the benchmark stage (the dict and the text `hvbench explain` prints)."""
    try:
        from hvbench_assets.core.benchmark.explain import explain_question, format_explanation
    except ImportError:
        return None
    data = explain_question(wh, question_id)
    return data, format_explanation(data)


def flow(wh: Warehouse, s: dict[str, list[dict]]) -> list[dict[str, Any]]:
    """The latest human actions and whether the graph has taken them in yet (the sensors' work). Reads the
    reviewed_questions and task_candidates rows of those 8 + 8 actions only (the whole tables took 7 s at
    20,000 questions)."""
    recent = s["decisions"][-8:]
    reviewed = {r["question_id"]: r for r in _rows_where(wh, REVIEWED_QUESTIONS, ("question_id",),
                                                          [(d["question_id"],) for d in recent])}
    out = []
    for d in recent:
        r = reviewed.get(d["question_id"])
        taken = r is not None and d["decision_id"] in (r["decision_ids"] or [])
        # superseded: made on another version, or the row was rebuilt after it without taking it
        replaced = r is not None and not taken and (r["content_hash"] != d["content_hash"] or bool(
            r["materialized_at"] and r["materialized_at"] >= d["created_at"]))
        out.append({"when": d["created_at"], "who": d["reviewer"], "what": f"{d['action']} {d['abbrev']}",
                    "question_id": d["question_id"],
                    "result": f"reviewed_questions: {r['state']}" if taken else
                    "superseded (a newer decision or version)" if replaced else "waiting for review_sensor"})
    latest = s["annotations"][-8:]
    built_from = s["memo"]("built_from", lambda: {a: q for q in s["questions"] for a in q.get("annotation_ids") or []},
                           ("questions",))
    by_ann = {a["annotation_id"]: built_from[a["annotation_id"]] for a in latest if a["annotation_id"] in built_from}
    tasks_of = {k: tuple(a for a, kind in ANNOTATED.items() if kind == k) for k in set(ANNOTATED.values())}
    keys = sorted({(a["video_id"], t) for a in latest if by_ann.get(a["annotation_id"]) is None
                   for t in tasks_of.get(a["kind"], ())})
    verdicts = {(c["video_id"], c["abbrev"]): c for c in _rows_where(wh, TASK_CANDIDATES, ("video_id", "abbrev"), keys)}
    for a in latest:
        q = by_ann.get(a["annotation_id"])
        if q is not None:
            result = f"{q['abbrev']} question rebuilt ({q['status']})"
        else:  # rebuilt after the annotation without a question: the rule dropped it (reason says why)
            later = [v for t in tasks_of.get(a["kind"], ()) if (v := verdicts.get((a["video_id"], t))) and v["materialized_at"]
                     and v["materialized_at"] >= a["created_at"] and v["status"] != "awaiting_annotation"]
            result = ("; ".join(f"{v['abbrev']} {v['status']}: {v['reason']}" for v in later) if later
                      else "waiting for annotation_sensor")
        out.append({"when": a["created_at"], "who": a["annotator"], "what": f"annotation {a['kind']} {a['video_id']}",
                    "question_id": q["question_id"] if q else None, "result": result})
    return sorted(out, key=lambda r: r["when"], reverse=True)[:12]


def _rows_where(wh: Warehouse, spec, columns: tuple[str, ...], values: list[tuple]) -> list[dict[str, Any]]:
    """Rows of `spec` whose `columns` equal one of `values` (a handful), JSON decoded; [] when the table is absent."""
    if not values or not wh.has_table(spec.name):
        return []
    if len(columns) == 1:  # IN: a third of the time of an OR chain on 20,000 rows
        where = f'"{columns[0]}" IN ({", ".join("?" * len(values))})'
    else:
        where = " OR ".join(["(" + " AND ".join(f'"{c}" = ?' for c in columns) + ")"] * len(values))
    rows = wh.query(f'SELECT * FROM "{spec.name}" WHERE {where}', [v for vs in values for v in vs])
    return decode(spec, rows)
