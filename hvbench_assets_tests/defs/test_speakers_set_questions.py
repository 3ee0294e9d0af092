"""ASD and AVSM on the speaker development set (../shared/videos/speakers): the real label assets, offline defaults,
then the two task assets. Where the defaults ask, the answer must be the truth; and they must ask often enough:
ASD on at least 4 of the 5 clips where one of 2-4 people speaks, AVSM on both clips where the voice's gender fits
exactly one face (issue 49)."""

from __future__ import annotations

import pytest

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.vision.tables import load_tracks
from hvbench_assets.defs.labels.audio import audio_tags, voice_demographics
from hvbench_assets.defs.labels.speakers import speaker_frame_scores, speaker_scores
from hvbench_assets.defs.labels.vision import demographics, human_tracks, human_verdicts, person_count
from hvbench_assets.defs.resources import WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets_tests.conftest import shared_clip
from hvbench_assets_tests.core.speakers.speakers_set import load_truth, panels_of
from hvbench_assets_tests.real_labels import materialize

pytestmark = pytest.mark.slow

LABELS = [audio_tags, voice_demographics, human_tracks, person_count, demographics, human_verdicts,
          speaker_frame_scores, speaker_scores]
TASKS = [a for a in TASK_ASSETS if a.key.to_user_string() in ("active_speaker_detection", "audio_visual_speaker_matching")]
ASD_CLIPS = {"dev_duo_left_speaks", "dev_duo_right_speaks", "dev_trio_middle_speaks", "dev_duo_man_speaks",
             "dev_trio_woman_speaks"}
AVSM_CLIPS = {"dev_duo_man_speaks", "dev_trio_woman_speaks"}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Per clip: {abbrev: (candidate row, question row or None, panel of each track)}."""
    shared_clip("speakers/truth.json")
    out = {}
    for name, clip in load_truth().items():
        key = name.removeprefix("dev_")
        root = tmp_path_factory.mktemp(key)
        wh = WarehouseResource(path=str(root / "wh.duckdb")).get()
        wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(clip.path).as_row(), "status": "ok", "reason": None}])
        _, wh = materialize(root, key, LABELS + TASKS)
        tracks = load_tracks(wh, key)
        centres = {t.track_id: sum((b.face[0] + b.face[2]) / 2 for b in t.boxes) / len(t.boxes) for t in tracks}
        panels = panels_of(centres, len(clip.panels))
        cands = {c["abbrev"]: c for c in wh.rows(TASK_CANDIDATES, video_id=key)}
        questions = {q["abbrev"]: q for q in wh.rows(QUESTIONS, video_id=key)}
        out[name] = {a: (cands.get(a), questions.get(a), panels) for a in ("ASD", "AVSM")}
    return out


def _asked(outcomes, abbrev):
    return {name: (q, panels) for name, by in outcomes.items() for c, q, panels in [by[abbrev]] if q is not None}


def test_every_asd_question_names_the_true_speaker(outcomes):
    truth = load_truth()
    asked = _asked(outcomes, "ASD")
    for name, (q, panels) in asked.items():
        target = {panels[t] for t in q["target_track_ids"]}
        assert target == truth[name].speaker_panels and len(target) == 1, (name, target, q["answer_text"])
    reasons = {n: by["ASD"][0]["reason"] for n, by in outcomes.items() if n in ASD_CLIPS and n not in asked}
    assert len(ASD_CLIPS & set(asked)) >= 4, reasons
    assert set(asked) <= ASD_CLIPS, set(asked) - ASD_CLIPS  # no voice-over, two voices, music or silence asked


def test_every_avsm_question_names_the_voice_and_both_clips_ask(outcomes):
    truth = load_truth()
    asked = _asked(outcomes, "AVSM")
    for name, (q, panels) in asked.items():
        target = {panels[t] for t in q["target_track_ids"]}
        assert target == truth[name].speaker_panels, (name, target, q["answer_text"])
    reasons = {n: by["AVSM"][0]["reason"] for n, by in outcomes.items() if n in AVSM_CLIPS}
    assert AVSM_CLIPS <= set(asked), reasons


def test_rejections_name_their_reason(outcomes):
    """Two voices at once never give a one-speaker question; a voice from off screen never gives AVSM."""
    both = outcomes["dev_duo_both_speak"]["ASD"][0]
    assert both["status"] == "rejected" and both["rule"] in ("one_speaker", "one_voice"), both["reason"]
    off = outcomes["dev_duo_offscreen_voice"]
    assert off["ASD"][1] is None and off["AVSM"][1] is None
    assert off["AVSM"][0]["rule"] in ("visible_speaker", "face_class", "one_match"), off["AVSM"][0]["reason"]
