"""What the review app's route modules share: the refusal every handler raises, the checks of request fields and
of the request body (its size before it is read, then its JSON)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from hvbench_assets.core.tasks import annotations


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def number(value: Any, name: str, low: float, high: float) -> float | None:
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


def text(data: dict[str, Any], name: str, max_len: int, required: bool = False) -> str | None:
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


def skipped(request: Request) -> set[str]:
    """The ids the reviewer skipped in this queue (`?skip=a,b`): the next item is another."""
    return {s for s in request.query_params.get("skip", "").split(",") if s}


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, or 400 / 415."""
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
