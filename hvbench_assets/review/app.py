"""The review web app (`hvbench review`): annotation queue, blind review queue (evaluation-flagged questions
first), adjudication list, grade queue, agreement, and a page per question. Starlette + Jinja2; every read and write
goes through `Warehouse` (flock-serialised, so Dagster runs may write at the same time).

This module assembles the app; the routes live in small modules that share one AppState (app_state.py):
pages.py (HTML pages), decisions.py (review and adjudication API), annotations.py, grading.py (the grade queue),
media.py (videos), login.py; identity.py says who is asking. The rules they apply are core/curation's (decisions.py,
queue.py, flags.py, leases.py).
"""

from __future__ import annotations

import contextlib
import logging
import threading

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hvbench_assets.review import annotations, decisions, grading, login, media, pages
from hvbench_assets.review.app_state import HERE, AppState
from hvbench_assets.review.config import ReviewConfig
from hvbench_assets.review.http import BodyLimit, Refused


def create_app(cfg: ReviewConfig) -> Starlette:
    app = AppState.open(cfg)

    async def refused(request: Request, exc: Refused) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.startswith("/media/") or exc.status != 404:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return app.templates.TemplateResponse(request, "error.html", {"message": exc.message, "reviewer": None},
                                              status_code=exc.status)

    routes = [
        *grading.routes(app), *pages.routes(app), *login.routes(app), *media.routes(app),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        *decisions.routes(app), *annotations.routes(app),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    # without tokens, a page from another site that rebinds its DNS name to 127.0.0.1 must not reach the app
    hosts = ["*"] if cfg.require_token else sorted({"127.0.0.1", "localhost", "::1", "[::1]", cfg.host})
    warmed = threading.Event()

    def warm_up() -> None:
        try:
            app.load_state()
        except Exception:  # noqa: BLE001 (the first request reads again and answers with the error)
            logging.getLogger(__name__).exception("review app: reading the warehouse at start failed")
        finally:
            warmed.set()

    @contextlib.asynccontextmanager
    async def lifespan(starlette: Starlette):
        """The review state is read in the background as the server starts (1-3 s at 20,000 questions): the port
        opens at once and a request arriving meanwhile waits only for the rest of that read (live.py's lock)."""
        starlette.state.warmed, starlette.state.live = warmed, app.live
        threading.Thread(target=warm_up, name="review-warm-up", daemon=True).start()
        yield

    return Starlette(routes=routes, exception_handlers={Refused: refused}, lifespan=lifespan,
                     middleware=[Middleware(BodyLimit, limit=cfg.max_body_bytes),
                                 Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])
