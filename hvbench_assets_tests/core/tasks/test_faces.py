"""The face gate: families whose truth reads a face skip tracks whose face the detector did not find often
enough (a body-only track, a face mostly interpolated), with the reason in task_candidates."""

from __future__ import annotations

import pytest

from hvbench_assets.core.tasks.faces import FaceGate, face_evidence, faceless
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS
from hvbench_assets.core.tasks.family import FACE_GATE
from hvbench_assets.testkit.labels_factory import clip_labels, full, track

GATED = {"ER", "ETA", "AR", "EIC", "T2H", "H2T", "AVSM"}


def test_the_gate_is_on_the_face_families_only():
    assert {f.abbrev for f in TASKS if f.face_gate is not None} == GATED
    assert all(f.face_gate is FACE_GATE for f in TASKS if f.face_gate is not None)
    # the thresholds are part of the code version: changing them makes exactly these tasks stale
    import dataclasses

    er = TASK_BY_ABBREV["ER"]
    assert dataclasses.replace(er, face_gate=FaceGate(0.6, 3)).fingerprint() != er.fingerprint()


@pytest.mark.parametrize(("detected", "skipped"), [(49, True), (50, False), (51, False)])
def test_share_boundary_every_frame_looked_at(detected, skipped):
    # 100 frames, no stored detect rate: every frame was a detection frame; the threshold is 50 %
    labels = clip_labels(duration_s=4, tracks=[track(0, 0, 99, detected=detected)])
    assert face_evidence(labels, labels.tracks[0]) == (detected, 100)
    assert (0 in faceless(labels, FACE_GATE)) is skipped


@pytest.mark.parametrize(("detected", "skipped"), [(12, True), (13, False), (14, False)])
def test_share_counts_only_the_frames_l1_ran_the_detector_on(detected, skipped):
    # 25 fps, detector at 6/s: every 4th frame, 25 of frames 0..99; 12/25 = 48 %, 13/25 = 52 %
    labels = clip_labels(duration_s=4, tracks=[track(0, 0, 99, detected=detected)], detect_fps=6.0)
    assert face_evidence(labels, labels.tracks[0])[1] == 25
    assert (0 in faceless(labels, FACE_GATE)) is skipped


@pytest.mark.parametrize(("detected", "skipped"), [(2, True), (3, False), (4, False)])
def test_minimum_detected_frames_boundary(detected, skipped):
    labels = clip_labels(duration_s=1, tracks=[track(0, 0, 5, detected=detected)])  # 2/6 .. 4/6, share >= 33 %
    gate = FaceGate(min_detected_share=0.3, min_detected_frames=3)
    assert (0 in faceless(labels, gate)) is skipped


def test_er_skips_a_body_only_track_and_picks_the_person_with_a_face():
    # the adult of two_children: a torso on screen the whole clip, its face box estimated from the body
    torso = track(0, 0, 249, x=20, detected=0, face_source="estimated")
    child = track(1, 0, 199, x=200)
    labels = clip_labels(duration_s=10, tracks=[torso, child], detect_fps=6.0)
    labels.rows["facial_description"] = [{"video_id": "clip", "track_id": t, "status": "ok", "text": "smiles"}
                                         for t in (0, 1)]
    out = run_family(TASK_BY_ABBREV["ER"], labels)  # no synthesis models: blocked after the selection
    row = out.candidate_row()
    assert row["target_track_ids"] == [1]
    assert row["measured"]["skipped_no_face"] == {"0": "face detected on 0/63 detection frames (0%), need 50% and >= 3 frames"}
    # a family without the gate still sees the torso (BTA: actions need no face)
    assert run_family(TASK_BY_ABBREV["BTA"], labels).candidate_row()["target_track_ids"] == [0]


def test_a_clip_with_only_a_faceless_person_is_rejected_naming_the_skipped_track():
    labels = clip_labels(duration_s=10, tracks=[track(0, 0, 249, detected=20, face_source="interpolated")],
                         detect_fps=6.0)
    for abbrev in ("ER", "AR", "H2T"):
        row = run_family(TASK_BY_ABBREV[abbrev], labels).candidate_row()
        assert row["status"] == "rejected" and row["target_track_ids"] == []
        assert "skipped (no detected face): track 0: face detected on 20/63 detection frames (32%)" in row["reason"]


def test_eic_letters_only_faced_tracks():
    faced = [full(i, 10, x=10 + 60 * i) for i in range(4)]
    torso = track(4, 0, 249, x=300, detected=0, face_source="estimated")
    labels = clip_labels(duration_s=10, tracks=[*faced, torso])
    row = run_family(TASK_BY_ABBREV["EIC"], labels).candidate_row()
    assert row["target_track_ids"] == [0, 1, 2, 3]
    assert row["measured"]["tracks sharing the longest presence"] == 4 and "4" in row["measured"]["skipped_no_face"]
