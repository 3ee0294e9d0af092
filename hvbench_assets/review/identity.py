"""Who is asking. On a loopback address a reviewer types a name (kept in a cookie); on any other address every
request needs a per-reviewer token (`hvbench review-token NAME`), and the name comes from the token only. The
login page that sets either cookie is login.py's."""

from __future__ import annotations

import re

from starlette.requests import Request

from hvbench_assets.core.curation import tokens
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review.config import ReviewConfig

NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
TOKEN_COOKIE, NAME_COOKIE = "hvbench_token", "hvbench_reviewer"


def identify(cfg: ReviewConfig, wh: Warehouse, request: Request) -> str | None:
    """The reviewer's name from the bearer token or token cookie (tokens required), else from the name cookie."""
    if cfg.require_token:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE)
        return tokens.reviewer_for(wh, token)
    name = request.cookies.get(NAME_COOKIE, "")
    return name if NAME.match(name) else None
