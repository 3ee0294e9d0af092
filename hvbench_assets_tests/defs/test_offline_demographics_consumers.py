"""Offline L3 rows reach AVSM and the L7 voice/face veto only when L3 is confident.

The clip: the two girls of two_children beside the talking man of man_talking_head, with only his voice
(testkit/speaker_composites.py, scene `children_mouthing`: the girls' mouths move without their sound). Labels L1-L10 run offline.
With the default L3 (the gender ensemble) the man's three gender models agree, so his row is ok (male), the girls'
rows are ok as children, and AVSM asks whose voice it is (the man). With SSR-Net alone (measured below the
required 0.9) the man's row is low_confidence: AVSM rejects the clip naming L3 and his track gets no veto. L7
flags none of the girls by itself; the veto firing on real L3 rows is shown in core/speakers/test_veto_offline_l3.py."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.speakers import rules
from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.tasks.rules import named_number
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.vision.tables import DEMOGRAPHICS, load_tracks
from hvbench_assets.defs.labels.speakers import speaker_scores
from hvbench_assets.defs.labels.vision import demographics
from hvbench_assets.defs.resources import VisionResource, WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import LABELS, resources

AVSM = next(a for a in TASK_ASSETS if a.key.to_user_string() == "audio_visual_speaker_matching")
KEY = "kids"


def _materialize(root: Path, assets, vision: VisionResource):
    res = {**resources(root, str(root / "no-models.toml")), "vision": vision}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [KEY])
    result = dg.materialize(assets, partition_key=KEY, resources=res, instance=instance, raise_on_error=False)
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    return res["warehouse"].get()


@pytest.fixture(scope="module")
def kids(tmp_path_factory):
    """(root, warehouse) with offline labels L1-L10 and AVSM under the default L3 rule."""
    from hvbench_assets.testkit.speaker_composites import SCENES, build_scene
    from hvbench_assets_tests.conftest import shared_clip

    root = tmp_path_factory.mktemp("kids")
    shared = shared_clip("man_talking_head.mp4").parent
    shared_clip("two_children.mp4")
    clip = build_scene(next(s for s in SCENES if s.name == "children_mouthing"), shared, root / "kids.mp4", seconds=4.0)
    wh = WarehouseResource(path=str(root / "wh.duckdb")).get()
    wh.replace(VIDEO_PROBE, {"video_id": KEY}, [{**probe_video(clip).as_row(), "status": "ok", "reason": None}])
    return root, _materialize(root, [*LABELS, AVSM], VisionResource())


def _man_track(wh) -> int:
    """The man's track: the face in the right panel (the girls' panel is the wider left one)."""
    return max(load_tracks(wh, KEY), key=lambda t: sum((b.face[0] + b.face[2]) / 2 for b in t.boxes) / len(t.boxes)).track_id


def test_default_ensemble_rows_give_an_avsm_question_and_a_veto(kids):
    """Default rule and model: the ensemble's members agree on the man (male), so AVSM asks about him offline."""
    _, wh = kids
    man = _man_track(wh)
    demo = {r["track_id"]: r for r in wh.rows(DEMOGRAPHICS, video_id=KEY)}
    assert demo[man]["status"] == "ok" and rules.face_class(demo[man]).label == "male", demo[man]
    assert demo[man]["method"] == "ensemble-v1" and demo[man]["gender_confidence"] >= 0.625
    girls = [r for t, r in demo.items() if t != man and r["status"] == "ok"]
    assert girls and all(rules.face_class(r).label == "child" for r in girls)
    # AVSM: the voice (L10: male) matches exactly one person, the man
    q = wh.rows(QUESTIONS, video_id=KEY, abbrev="AVSM")
    assert len(q) == 1, next(c for c in wh.rows(TASK_CANDIDATES, video_id=KEY) if c["abbrev"] == "AVSM")
    answer = next(o for o in q[0]["options"] if o["letter"] == q[0]["answer"])
    assert named_number(answer["text"]) == q[0]["marking"]["numbers"][str(man)]  # "Person <the man's number>"
    # L7: the man speaks; every girl's track L7 flags from her moving mouth is vetoed (man's voice, child's face)
    scores = {r["track_id"]: r for r in wh.rows(SPEAKER_SCORES, video_id=KEY)}
    assert scores[man]["speaking"] and scores[man]["veto_reason"] is None and scores[man]["face_class"] == "male"
    # L7 flags none of the girls here on its own (its chance floor); were one flagged, the veto would overturn it
    for t, r in scores.items():
        if t != man:
            assert not r["speaking"] and r["face_class"] in ("child", None) and r["voice_class"] == "male"
            if r.get("raw_speaking") and r["face_class"]:
                assert "voice is male" in r["veto_reason"] and "face is child" in r["veto_reason"]


def test_ssrnet_alone_keeps_offline_l3_out_of_avsm_and_the_veto(kids):
    """SSR-Net alone: the man's row is low_confidence (its measured gender accuracy is below 0.9), the girls'
    rows are ok as children without a gender (child/adult measured above 0.9): AVSM lacks the man's class.
    Runs last: it rewrites the module's L3, L7 and AVSM rows."""
    root, _ = kids
    wh = _materialize(root, [demographics, speaker_scores, AVSM], VisionResource(demographics_model="ssrnet"))
    man = _man_track(wh)
    demo = {r["track_id"]: r for r in wh.rows(DEMOGRAPHICS, video_id=KEY)}
    assert demo[man]["status"] == "low_confidence" and "ssrnet-v1: measured per-track gender accuracy" in demo[man]["reason"]
    girls = [r for t, r in demo.items() if t != man and r["status"] == "ok"]
    assert girls and all(r["age_class"] == "child" and r["gender"] is None for r in girls)
    cand = next(c for c in wh.rows(TASK_CANDIDATES, video_id=KEY) if c["abbrev"] == "AVSM")
    assert cand["status"] == "rejected" and "face class unknown for 1 person(s)" in cand["reason"], cand
    assert "low_confidence" in cand["reason"]
    scores = {r["track_id"]: r for r in wh.rows(SPEAKER_SCORES, video_id=KEY)}
    assert scores[man]["face_class"] is None and scores[man]["speaking"] and scores[man]["veto_reason"] is None
