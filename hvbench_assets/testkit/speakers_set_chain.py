"""The speaker development set, and the composites and shared clips of benchmarks/speaker_accuracy.py, through the
real label assets and the ASD / AVSM task assets (offline defaults): used by test_speakers_set_questions.py and
benchmarks/speaker_questions.py."""

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
from hvbench_assets.testkit import SHARED_VIDEOS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets.testkit.speaker_composites import SCENES, build_scene, face_truth
from hvbench_assets.testkit.speakers_set import load_truth, panels_of

LABELS = [audio_tags, voice_demographics, human_tracks, person_count, demographics, human_verdicts,
          speaker_frame_scores, speaker_scores]
FAMILIES = (active_speaker_detection.FAMILY, audio_visual_speaker_matching.FAMILY)
TASKS = [a for a in TASK_ASSETS if a.key.to_user_string() in {f.asset for f in FAMILIES}]


def clip_outcomes(path: Path, key: str, root: Path, label_of: Callable[[dict[int, float]], dict[int, object]]) -> dict:
    """{abbrev: (task_candidates row, question row or None, track id -> label)} of one clip; `label_of` names each
    track (a panel, a person) from the tracks' mean face centres x."""
    wh = WarehouseResource(path=str(root / "wh.duckdb")).get()
    wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(path).as_row(), "status": "ok", "reason": None}])
    _, wh = materialize(root, key, LABELS + TASKS)
    tracks = load_tracks(wh, key)
    centres = {t.track_id: sum((b.face[0] + b.face[2]) / 2 for b in t.boxes) / len(t.boxes) for t in tracks}
    labels = label_of(centres)
    cands = {c["abbrev"]: c for c in wh.rows(TASK_CANDIDATES, video_id=key)}
    questions = {q["abbrev"]: q for q in wh.rows(QUESTIONS, video_id=key)}
    return {f.abbrev: (cands.get(f.abbrev), questions.get(f.abbrev), labels) for f in FAMILIES}


def question_outcomes(new_folder: Callable[[str], Path]) -> dict[str, dict]:
    """Per clip of the speakers set: {abbrev: (task_candidates row, question row or None, track id -> panel)}."""
    out = {}
    for name, clip in load_truth().items():
        key = name.removeprefix("dev_")
        out[name] = clip_outcomes(clip.path, key, new_folder(key), lambda c, n=len(clip.panels): panels_of(c, n))
    return out


def composite_outcomes(new_folder: Callable[[str], Path]) -> dict[str, tuple[set[str], dict]]:
    """Per composite scene and shared clip of benchmarks/speaker_accuracy.py: (the speakers' labels, outcomes as
    above with track id -> label). A label is a panel's name, or a bystander's / an unknown face's."""
    out = {}
    for scene in SCENES:
        root = new_folder(scene.name)
        path = build_scene(scene, SHARED_VIDEOS, root / f"{scene.name}.mp4")
        out[scene.name] = (scene.speaking(), clip_outcomes(path, scene.name, root, lambda c, s=scene: {
            t: face_truth(x, s, SHARED_VIDEOS)[0] for t, x in c.items()}))
    for name, speakers, label in SHARED_CLIPS:
        out[name] = (speakers, clip_outcomes(SHARED_VIDEOS / f"{name}.mp4", name, new_folder(name),
                                             lambda c, f=label: {t: f(x) for t, x in c.items()}))
    return out


# the shared clips with one known speaker (../shared/videos/README.md): who speaks, and each face's label by its x
SHARED_CLIPS = (
    ("five_people_grid", {"man"}, lambda x: "man" if x > 1120 else f"x{x:.0f}"),
    ("man_talking_head", {"man"}, lambda x: "man"),
    # the front woman (left) speaks from 13 s; the girl braiding her hair (right) never speaks
    ("two_people_talking", {"woman"}, lambda x: "woman" if x < 240 else "girl"),
)
