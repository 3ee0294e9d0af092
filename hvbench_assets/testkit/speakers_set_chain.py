"""The speaker development set through the real label assets and the ASD / AVSM task assets (offline defaults):
used by test_speakers_set_questions.py and benchmarks/speaker_questions.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.tasks.families import active_speaker_detection, audio_visual_speaker_matching
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.vision.tables import load_tracks
from hvbench_assets.defs.labels.audio import audio_tags, voice_demographics
from hvbench_assets.defs.labels.speakers import speaker_frame_scores, speaker_scores
from hvbench_assets.defs.labels.vision import demographics, human_tracks, human_verdicts, person_count
from hvbench_assets.defs.resources import WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets.testkit.speakers_set import load_truth, panels_of

LABELS = [audio_tags, voice_demographics, human_tracks, person_count, demographics, human_verdicts,
          speaker_frame_scores, speaker_scores]
FAMILIES = (active_speaker_detection.FAMILY, audio_visual_speaker_matching.FAMILY)
TASKS = [a for a in TASK_ASSETS if a.key.to_user_string() in {f.asset for f in FAMILIES}]


def question_outcomes(new_folder: Callable[[str], Path]) -> dict[str, dict]:
    """Per clip of the set: {abbrev: (task_candidates row, question row or None, track id -> panel)}."""
    out = {}
    for name, clip in load_truth().items():
        key = name.removeprefix("dev_")
        root = new_folder(key)
        wh = WarehouseResource(path=str(root / "wh.duckdb")).get()
        wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(clip.path).as_row(), "status": "ok", "reason": None}])
        _, wh = materialize(root, key, LABELS + TASKS)
        tracks = load_tracks(wh, key)
        centres = {t.track_id: sum((b.face[0] + b.face[2]) / 2 for b in t.boxes) / len(t.boxes) for t in tracks}
        panels = panels_of(centres, len(clip.panels))
        cands = {c["abbrev"]: c for c in wh.rows(TASK_CANDIDATES, video_id=key)}
        questions = {q["abbrev"]: q for q in wh.rows(QUESTIONS, video_id=key)}
        out[name] = {f.abbrev: (cands.get(f.abbrev), questions.get(f.abbrev), panels) for f in FAMILIES}
    return out
