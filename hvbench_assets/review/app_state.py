"""What the route modules share, one object per app: the settings, the warehouse, the templates, the review state
kept in memory (core/curation/live.py), and the steps every request takes: who is asking, a page, a question row,
a JSON endpoint run in the thread pool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from hvbench_assets.core.curation.live import LiveState
from hvbench_assets.core.curation.media import QUESTION_ID
from hvbench_assets.core.curation.state import REASONS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.config import ReviewConfig
from hvbench_assets.review.http import Refused, json_body
from hvbench_assets.review import identity
from hvbench_assets.settings_table import open_warehouse

HERE = Path(__file__).parent
Handler = Callable[["AppState", Request, "dict[str, Any] | None"], Response]  # handler(app, request, JSON body)


@dataclass
class AppState:
    cfg: ReviewConfig
    wh: Warehouse
    templates: Jinja2Templates
    live: LiveState
    grade_count: Callable[[], int] = lambda: 0  # replies waiting for a grader (the start page's count; grading.py)

    @classmethod
    def open(cls, cfg: ReviewConfig) -> AppState:
        return cls(cfg, open_warehouse(cfg.warehouse), Jinja2Templates(directory=str(HERE / "templates")),
                   LiveState(cfg.excluded))

    def load_state(self) -> dict[str, Any]:
        """What store.load_state returns plus `hashes`, `states` and `reviewed` (curate's rows), kept in memory and
        refreshed by what changed since the last request (core/curation/live.py)."""
        return self.live.refresh(self.wh).state()

    def reviewer_of(self, request: Request) -> str | None:
        """Who is asking (identity.py), looked up once per request."""
        if "reviewer" in request.scope.setdefault("state", {}):
            return request.scope["state"]["reviewer"]
        request.scope["state"]["reviewer"] = who = identity.identify(self.cfg, self.wh, request)
        return who

    def need_reviewer(self, request: Request) -> str:
        who = self.reviewer_of(request)
        if who is None:
            raise Refused(401, "a valid reviewer token is required" if self.cfg.require_token else
                          "say who you are first (name field on the start page)")
        return who

    def page(self, request: Request, name: str, **ctx) -> Response:
        who = self.reviewer_of(request)
        if who is None and self.cfg.require_token:
            return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
        return self.templates.TemplateResponse(request, name, {"reviewer": who, "require_token": self.cfg.require_token,
                                                               "reasons": REASONS, **ctx})

    def queue_page(self, request: Request, take: Callable[[str], dict[str, Any] | None], template: str,
                   **ctx) -> Response:
        """A queue's page with the item `take(reviewer)` gives; an unknown visitor goes to the start page to say
        who they are, or logs in when tokens are required."""
        who = self.reviewer_of(request)
        if who is None:
            return RedirectResponse("/", status_code=303) if not self.cfg.require_token else \
                self.page(request, "home.html")
        with self.wh.batch():  # one lock and attach for the state and the lease (the template is made after)
            item = take(who)
        return self.page(request, template, item=item, **ctx)

    def question_row(self, qid: str) -> dict[str, Any]:
        if not QUESTION_ID.match(qid or ""):
            raise Refused(400, f"{qid!r} is not a question id")
        rows = self.wh.rows(QUESTIONS, question_id=qid)
        if not rows:
            raise Refused(404, f"no question {qid}")
        return rows[0]

    def view(self, handler: Callable[[AppState, Request], Response]) -> Callable[[Request], Response]:
        """A page's endpoint: Starlette runs it in the thread pool (it is not async)."""
        def endpoint(request: Request) -> Response:
            return handler(self, request)
        return endpoint

    def json(self, handler: Handler, identify: bool = True):
        """Warehouse calls block (they wait for the file lock while a Dagster run writes), so every handler runs
        in the thread pool; only reading the JSON body happens on the event loop, after the reviewer is known
        (an unknown client's body is never parsed)."""
        async def endpoint(request: Request) -> Response:
            if identify and request.method == "POST":
                await run_in_threadpool(self.need_reviewer, request)
            data = await json_body(request) if request.method == "POST" else None
            return await run_in_threadpool(self.batched, handler, self, request, data)
        return endpoint

    def batched(self, handler: Callable[..., Response], *args) -> Response:
        """A decision and the next item read and write through one warehouse connection (one open of the file
        instead of eight): most of the time between a key press and the next item on a DuckDB file."""
        with self.wh.batch():
            return handler(*args)
