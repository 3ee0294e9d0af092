"""/media/{question_id}: a question's video. The path is looked up in `questions` (core/curation/media.py), never
taken from the request."""

from __future__ import annotations

import re
import time
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from hvbench_assets.core.curation.media import MediaRefused, question_video
from hvbench_assets.review.app_state import AppState
from hvbench_assets.review.http import Refused

MEDIA_CACHE_S = 30.0


class Videos:
    """A browser fetches a video in several range requests: the first (no range, or from byte 0) looks the path
    up; the later ones reuse it for MEDIA_CACHE_S, so they do not each take the warehouse lock while the reviewer's
    next decision waits."""

    def __init__(self, app: AppState):
        self.app = app
        self.found: dict[str, tuple[float, Path]] = {}  # question id -> (when looked up, file)

    def serve(self, request: Request) -> Response:
        app = self.app
        if app.cfg.require_token:
            app.need_reviewer(request)
        qid = request.path_params["question_id"]
        hit = self.found.get(qid)
        first = re.match(r"bytes=0*-", request.headers.get("range", "bytes=0-").strip()) is not None
        if first or hit is None or time.monotonic() - hit[0] > MEDIA_CACHE_S or not hit[1].is_file():
            try:
                with app.wh.batch():
                    hit = self.found[qid] = (time.monotonic(),
                                             question_video(app.wh, qid, app.cfg.data_dir, app.cfg.roots))
            except MediaRefused as exc:
                raise Refused(404, str(exc)) from None
            if len(self.found) > 10_000:
                self.found.clear()
        return FileResponse(hit[1], media_type="video/mp4")


def routes(app: AppState) -> list[Route]:
    return [Route("/media/{question_id:path}", Videos(app).serve)]
