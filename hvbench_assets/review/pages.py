"""The app's HTML pages: the start page, the three queues' pages (review, adjudicate, annotate), the question list,
a page per question and the stats page (/agreement). The grade page is grading.py's."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hvbench_assets.core.curation.agreement import kappa_table, latest_reviews, reviewer_accuracy
from hvbench_assets.core.curation.state import STATES, is_question, state_counts
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.flow import flow
from hvbench_assets.review.http import Refused
from hvbench_assets.review.items import next_adjudication, next_annotation, next_review, review_item
from hvbench_assets.review.queues import (annotation_items, counters, decisions_on, flags_open, my_disputes,
                                          my_queue)
from hvbench_assets.review.stats import clip_durations, timing_stats

QUESTIONS_PER_PAGE = 500


def home(app: AppState, request: Request) -> Response:
    who = app.reviewer_of(request)
    with app.wh.batch():  # one lock and attach for the state and the flow's few rows
        s = app.load_state()
        recent = flow(app.wh, s)
    ctx = {"counts": s["memo"]("state_counts", lambda: state_counts(s["reviewed"]), ("reviewed",)), "states": STATES,
           "flow": recent, "annotation_items": len(annotation_items(s)), "excluded": sorted(app.cfg.excluded)}
    if who:
        queue = my_queue(app, s, who)
        ctx["review_items"] = len(queue)
        ctx["flagged_items"] = sum(q["question_id"] in flags_open(s) for q in queue)
        ctx["adjudication_items"] = len(my_disputes(app, s, who))
        ctx["grade_items"] = app.grade_count()
    return app.page(request, "home.html", **ctx)


def review_page(app: AppState, request: Request) -> Response:
    again = request.query_params.get("question")
    take = (lambda who: review_again(app, who, again)) if again else (lambda who: next_review(app, who, set()))
    return app.queue_page(request, take, "review.html", mode="review")


def review_again(app: AppState, who: str, qid: str) -> dict[str, Any]:
    """One question again (from its page): the new decision replaces this reviewer's earlier one."""
    q = app.question_row(qid)
    if not is_question(q):
        raise Refused(400, f"{qid} has no question text yet (it waits for an annotation)")
    s = app.load_state()
    return review_item(q, who, counters(app, s, who, False), s)


def adjudicate_page(app: AppState, request: Request) -> Response:
    return app.queue_page(request, lambda who: next_adjudication(app, who, set()), "review.html", mode="adjudicate")


def annotate_page(app: AppState, request: Request) -> Response:
    return app.queue_page(request, lambda who: next_annotation(app, who, set()), "annotate.html")


def question_page(app: AppState, request: Request) -> Response:
    qid = request.path_params["question_id"]
    if app.reviewer_of(request) is None and app.cfg.require_token:
        return app.page(request, "home.html")
    with app.wh.batch():  # one lock and attach for the state and the ~20 reads of the provenance chain
        q = app.question_row(qid)
        s = app.load_state()
        explanation = explain(app.wh, qid)
    family = TASK_BY_ABBREV.get(q["abbrev"])
    dagster = app.cfg.dagster_url.rstrip("/")
    links = [(f"{a} / {q['video_id']}", f"{dagster}/assets/{a}?view=partitions&partition={quote(q['video_id'])}")
             for a in ([family.asset] if family else []) + ["human_tracks", "video_probe"]]
    links.append(("reviewed_questions", f"{dagster}/assets/reviewed_questions"))
    return app.page(request, "question.html", q=q, reviewed=s["states"].get(qid), explanation=explanation,
                    links=links, decisions=decisions_on(s, qid), content_hash=question_content_hash(q))


def questions_page(app: AppState, request: Request) -> Response:
    s = app.load_state()
    state, task = request.query_params.get("state"), request.query_params.get("task")
    rows = [r for r in s["reviewed"] if (not state or r["state"] == state) and (not task or r["abbrev"] == task)]
    try:
        start = max(0, int(request.query_params.get("from") or 0))
    except ValueError:
        raise Refused(400, "from= takes a row number") from None
    shown = rows[start:start + QUESTIONS_PER_PAGE]  # 20,000 rows would be a 10 MB page
    text = {r["question_id"]: s["by_id"][r["question_id"]]["question"] for r in shown}
    return app.page(request, "questions.html", rows=shown, total=len(rows), start=start, per_page=QUESTIONS_PER_PAGE,
                    text=text, state=state, task=task)


def agreement_page(app: AppState, request: Request) -> Response:
    with app.wh.batch():  # one lock and attach for the state and the clip lengths
        s = app.load_state()
        durations = clip_durations(app.wh)

    def agreement() -> dict[str, Any]:
        known = {"hashes": s["hashes"], "by_id": s["by_id"]}
        known["reviews"] = latest_reviews(s["questions"], s["decisions"], **known)  # once for the three tables
        return {"blind": kappa_table(s["questions"], s["decisions"], "blind", **known),
                "verdict": kappa_table(s["questions"], s["decisions"], "verdict", **known),
                "accuracy": reviewer_accuracy(s["questions"], s["decisions"], s["reviewed"], **known),
                "disputed": my_disputes(app, s, None), "assignments": len(s["assignments"])}

    floor = app.cfg.fast_floor_s
    timing = s["memo"](("timing", floor, tuple(sorted(durations.items()))),
                       lambda: timing_stats(s, s["reviewed"], durations, floor), ("decisions", "reviewed"))
    return app.page(request, "agreement.html", **s["memo"]("agreement", agreement), **timing)


def explain(wh: Warehouse, question_id: str) -> tuple[dict[str, Any], str] | None:
    """The provenance chain from the benchmark stage (the dict and the text `hvbench explain` prints)."""
    try:
        from hvbench_assets.core.benchmark.explain import explain_question, format_explanation
    except ImportError:
        return None
    data = explain_question(wh, question_id)
    return data, format_explanation(data)


def routes(app: AppState) -> list[Route]:
    return [Route("/", app.view(home)), Route("/review", app.view(review_page)),
            Route("/adjudicate", app.view(adjudicate_page)), Route("/annotate", app.view(annotate_page)),
            Route("/agreement", app.view(agreement_page)), Route("/questions", app.view(questions_page)),
            Route("/questions/{question_id}", app.view(question_page))]
