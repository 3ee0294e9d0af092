"""/login: the page, and the POST that answers with a cookie carrying the reviewer's token or name (identity.py)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hvbench_assets.core.curation import tokens
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.http import Refused
from hvbench_assets.review.identity import NAME, NAME_COOKIE, TOKEN_COOKIE


def login(app: AppState, request: Request, data: dict[str, Any] | None) -> Response:
    """GET: the login page. POST: a token (tokens required) or a name, answered with a cookie that carries it."""
    cfg = app.cfg
    if request.method == "GET":
        return app.templates.TemplateResponse(request, "login.html", {
            "reviewer": None, "next": request.query_params.get("next", "/"), "require_token": cfg.require_token})
    if cfg.require_token:
        who = tokens.reviewer_for(app.wh, str(data.get("token") or ""))
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


def routes(app: AppState) -> list[Route]:
    return [Route("/login", app.json(login, identify=False), methods=["GET", "POST"])]
