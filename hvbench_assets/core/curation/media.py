"""The video a reviewer or annotator watches, found by question id only (never a path from a request).

Annotation requests have no question video yet: AST/TSA show the clip with the target's red box (rendered
once from the stored L1 boxes, the same file the task asset would render), HC the clip itself."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from hvbench_assets.core.ingest.tables import ClipNotFound, load_clip
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.render.questions import render_question_video
from hvbench_assets.core.tasks.catalog import ANNOTATED
from hvbench_assets.core.tasks.materialize import question_dir
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.vision.tables import load_tracks
from hvbench_assets.core.warehouse import Warehouse

QUESTION_ID = re.compile(r"^q[0-9a-f]{15}$")


class MediaRefused(LookupError):
    """The id is malformed or unknown, or its file lies outside the folders the server may read."""


def inside(path: Path, roots: Iterable[Path]) -> bool:
    real = Path(path).resolve()
    return any(real.is_relative_to(Path(r).resolve()) for r in roots)


def question_video(warehouse: Warehouse, question_id: str, data_dir: Path, roots: Iterable[Path] = ()) -> Path:
    """The file to play for `question_id`; it must lie under `data_dir` or one of `roots` (HVBENCH_ALLOWED_ROOTS)."""
    if not QUESTION_ID.match(question_id or ""):
        raise MediaRefused(f"{question_id!r} is not a question id")
    rows = warehouse.rows(QUESTIONS, question_id=question_id)
    if not rows:
        raise MediaRefused(f"no question {question_id}")
    q = rows[0]
    if q.get("video_path"):
        path = resolve(q["video_path"])
    else:
        try:
            clip = load_clip(warehouse, q["video_id"])
        except ClipNotFound as exc:
            raise MediaRefused(f"{question_id}: {exc}") from exc
        if ANNOTATED.get(q["abbrev"]) == "action" and q.get("target_track_ids"):  # a red-boxed target
            marking = {"kind": "red_box", "track_ids": sorted(int(t) for t in q["target_track_ids"])}
            out_dir = question_dir(data_dir, q["video_id"])
            path = render_question_video(clip.path, clip.sha256, load_tracks(warehouse, q["video_id"]), marking, out_dir)
        else:
            path = Path(clip.path)
    allowed = [Path(data_dir), *roots]
    if not inside(path, allowed):
        raise MediaRefused(f"{question_id}: its video lies outside the data folder and HVBENCH_ALLOWED_ROOTS")
    if not path.is_file():
        raise MediaRefused(f"{question_id}: video {path.name} is missing (re-materialize the task for {q['video_id']})")
    return path
