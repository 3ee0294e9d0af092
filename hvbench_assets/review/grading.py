"""The grade queue's routes: /grade (the page), /api/grades/next and /api/grades (store a grade, answer with the
next reply). Which replies wait and how grades count are core/curation/grading.py's; this module reads the
replies (eval_responses), the question and reference of each from its benchmark folder, and leases one reply to
one grader at a time (core/curation/leases.py, queue `grade`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.open_ended import truth_of
from hvbench_assets.core.tasks.catalog import task_info
from hvbench_assets.core.curation import leases
from hvbench_assets.core.curation.grading import (KEYS, BadGrade, grade_queue, grades, key_of, record_grade, reply_id,
                                                  reply_sha)
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.scoring.open_judge import RUBRIC
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.http import Refused, number, skipped, text

QUEUE = "grade"
# the judge's rubric without its last line (the one-word answer format): graders grade by the judge's own rule
CRITERIA = RUBRIC.rsplit("\n\n", 1)[0]


class Texts:
    """(task, question_id) -> (question, reference) of a benchmark folder, read again when a task file changes."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[float, dict[tuple[str, str], tuple[str, str]]]] = {}

    def of(self, root: Path) -> dict[tuple[str, str], tuple[str, str]]:
        stamp = max((p.stat().st_mtime for p in root.glob("*.jsonl")), default=-1.0)
        hit = self._cache.get(root)
        if hit is None or hit[0] != stamp:
            items = load_benchmark(root).items if stamp >= 0 else []
            hit = self._cache[root] = (stamp, {(i.task, i.question_id): (i.question, truth_of(i)[2]) for i in items})
        return hit[1]


def routes(app: AppState) -> list[Route]:
    """The grade routes; sets `app.grade_count` (how many replies wait for a grader: the start page's count)."""
    wh = app.wh
    texts = Texts()

    def open_replies() -> list[dict[str, Any]]:
        """Open replies nobody has graded in their current wording, whose question can be shown, with it."""
        if not wh.has_table(EVAL_RESPONSES.name) or not wh.has_table(EVAL_RUNS.name):
            return []
        rows = wh.query(f'SELECT run_id, benchmark, task, question_id, rotation, status, grade, response '
                        f'FROM "{EVAL_RESPONSES.name}" WHERE grade IS NOT NULL AND rotation = 0')
        roots = {r["run_id"]: resolve(r["benchmark_root"])
                 for r in wh.query(f'SELECT run_id, benchmark_root FROM "{EVAL_RUNS.name}"')}
        out = []
        for r in grade_queue(rows, grades(wh)):
            root = roots.get(r["run_id"])
            shown = texts.of(root).get((r["task"], str(r["question_id"]))) if root is not None else None
            if shown is not None:  # a benchmark folder gone since: nothing to show the grader
                out.append({**r, "question": shown[0], "reference": shown[1]})
        return out

    def next_item(who: str, skip: set[str]) -> dict[str, Any] | None:
        replies = open_replies()
        candidates = [{"question_id": r["reply_id"], "reply": r} for r in replies if r["reply_id"] not in skip]
        first, remaining = leases.take(wh, who, QUEUE, candidates, lambda c: True, app.cfg.lease_minutes)
        if first is None:
            return None
        remaining += sum(r["reply_id"] in skip for r in replies)  # as the review queue: "left" counts skipped ones
        r = first["reply"]
        info = task_info(r["task"])
        done = len({g["reply_id"] for g in grades(wh) if g["grader"] == who})
        return {"reply_id": r["reply_id"], "reply_sha": r["reply_sha"], "task": r["task"],
                "abbrev": info.abbrev if info else r["task"], "question": r["question"], "reference": r["reference"],
                "reply": r["response"], "remaining": remaining, "done": done}

    def grade_page(app: AppState, request: Request) -> Response:
        return app.queue_page(request, lambda who: next_item(who, set()), "grade.html", criteria=CRITERIA, keys=KEYS)

    def api_next(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
        return JSONResponse({"item": next_item(app.need_reviewer(request), skipped(request))})

    def api_grade(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
        who = app.need_reviewer(request)
        rid = text(data, "reply_id", 40, required=True)
        verdict = text(data, "verdict", 20, required=True)
        seconds = number(data.get("seconds_spent"), "seconds_spent", 0, 86400)
        rows = wh.query(f'SELECT run_id, benchmark, task, question_id, response FROM "{EVAL_RESPONSES.name}" '
                        "WHERE grade IS NOT NULL AND rotation = 0") if wh.has_table(EVAL_RESPONSES.name) else []
        reply = next((r for r in rows if reply_id(*key_of(r)) == rid), None)
        if reply is None:
            raise Refused(404, f"no open reply {rid}")
        if data.get("reply_sha") is not None and data.get("reply_sha") != reply_sha(reply["response"]):
            raise Refused(409, f"reply {rid} was asked again since it was shown (its text changed); reload")
        try:
            g = record_grade(wh, reply, who, verdict, request_id=text(data, "request_id", 100), seconds_spent=seconds)
        except BadGrade as exc:
            raise Refused(400, str(exc)) from None
        return JSONResponse({"stored": True, "grade_id": g["grade_id"], "duplicate": g["duplicate"],
                             "verdict": verdict, "next": next_item(who, skipped(request))})

    app.grade_count = lambda: len(open_replies())
    return [Route("/grade", app.view(grade_page)), Route("/api/grades/next", app.json(api_next)),
            Route("/api/grades", app.json(api_grade), methods=["POST"])]
