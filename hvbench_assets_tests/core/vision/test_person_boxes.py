"""Offline person (body) boxes: YOLOX-nano on real frames, matched to L1's face tracks by the paper's rule."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.media import MediaError, iter_frames, write_video
from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.boxes import iou
from hvbench_assets.core.vision.detectors import YoloxPersonDetector
from hvbench_assets.core.vision.pipeline import TrackingParams, track_video
from hvbench_assets.testkit.media_factory import audio_only_file
from hvbench_assets_tests.conftest import shared_clip

# two_children frame 0, boxed by hand (benchmarks/person_boxes.json): the girls and the adult's torso
GIRL_LEFT, GIRL_RIGHT, TORSO = (355, 0, 950, 720), (985, 110, 1275, 700), (950, 0, 1280, 310)


@pytest.fixture(scope="module")
def detector():
    return YoloxPersonDetector()


@pytest.fixture(scope="module")
def kids_tracked(tmp_path_factory):
    return track_video(shared_clip("two_children.mp4"), tmp_path_factory.mktemp("kids") / "t", build_backend("offline"))


def _picture(name: str) -> np.ndarray:
    import cv2
    import skimage.data

    return cv2.cvtColor(getattr(skimage.data, name)(), cv2.COLOR_RGB2BGR)


def test_yolox_boxes_each_person_on_a_real_frame(detector, two_children):
    frame = next(iter_frames(two_children)).image
    boxes = detector.detect(frame)
    for person in (GIRL_LEFT, GIRL_RIGHT):
        assert max(iou(b, person) for b in boxes) > 0.75
    assert "yolox_nano.onnx" in detector.model and "Apache-2.0" in detector.model  # provenance in the rows
    low = YoloxPersonDetector(conf=0.3).detect(frame)  # the torso scores 0.43 on this frame
    assert max(iou(b, TORSO) for b in low) > 0.4


def test_no_person_box_on_pictures_without_people(detector):
    for name in ("coffee", "chelsea", "rocket", "immunohistochemistry"):
        assert detector.detect(_picture(name)) == [], name
    astronaut = detector.detect_scored(_picture("astronaut"))  # the same pictures' one portrait: found
    assert len(astronaut) == 1 and astronaut[0][1] > 0.8 and iou(astronaut[0][0], (18, 15, 362, 512)) > 0.8


def test_offline_l1_stores_detected_body_boxes_for_both_girls(kids_tracked):
    res = kids_tracked
    assert len(res.tracks) == 2 and all(t["body_source"] == "detected" for t in res.tracks)
    first = {b["track_id"]: b for b in res.boxes if b["frame"] == 0}
    bodies = sorted((b["body_x1"], b["body_y1"], b["body_x2"], b["body_y2"]) for b in first.values())
    assert iou(bodies[0], GIRL_LEFT) > 0.75 and iou(bodies[1], GIRL_RIGHT) > 0.75
    assert all(b["body_source"] == "detected" for b in first.values())
    for tid in (0, 1):
        sources = {b["body_source"] for b in res.boxes if b["track_id"] == tid}
        assert sources <= {"detected", "filled"} and "detected" in sources
    # the right girl never takes the adult's torso box above her head (smaller, so the area term would prefer it)
    right = max(res.tracks, key=lambda t: next(b["face_x1"] for b in res.boxes if b["track_id"] == t["track_id"]))
    assert all(b["body_y2"] > 500 for b in res.boxes if b["track_id"] == right["track_id"] and b["body_source"] == "detected")


def test_the_faceless_torso_is_counted_but_gets_no_track(kids_tracked):
    """As on the full profile, a person without a face gets no track (L2 counts visible faces: 2);
    the clip-level count says someone else is there."""
    assert len(kids_tracked.tracks) == 2 and kids_tracked.faceless_bodies == 1


def test_a_clip_without_people_has_no_track_and_no_body(tmp_path):
    video = write_video(tmp_path / "coffee.mp4", (_picture("coffee") for _ in range(40)), fps=20)
    res = track_video(video, tmp_path / "t", build_backend("offline"))
    assert res.tracks == [] and res.boxes == [] and res.faceless_bodies == 0


def test_person_detection_runs_on_fewer_frames_than_face_detection(tmp_path, two_children, kids_tracked):
    """By default (person_fps=2) one face-detection frame in three gets person boxes; between them the last
    matched box follows the face (filled). person_fps=6 looks on every face-detection frame."""
    sparse = kids_tracked
    assert {t["params"]["person_fps"] for t in sparse.tracks} == {2.0}
    res = track_video(two_children, tmp_path / "t", build_backend("offline"),
                      TrackingParams(person_fps=6.0, max_embeddings=0))
    dense = {b["frame"] for b in res.boxes if b["body_source"] == "detected"}
    few = {b["frame"] for b in sparse.boxes if b["body_source"] == "detected"}
    assert 0 < len(few) <= len(dense) / 2 and few <= dense
    assert all(t["body_source"] == "detected" for t in res.tracks)


def test_without_a_person_detector_bodies_are_estimated(tmp_path, two_children):
    res = track_video(two_children, tmp_path / "t", build_backend("offline", person_detector="none"),
                      TrackingParams(max_embeddings=0))
    assert {b["body_source"] for b in res.boxes} == {"estimated"} and res.faceless_bodies is None


def test_bad_input_and_settings_fail_clearly(tmp_path):
    """A corrupt file and a file without video frames fail naming the file (the asset turns this into a
    failed partition, test_vision_assets.py); an unknown detector name fails before any work."""
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video at all" * 100)
    backend = build_backend("offline")
    with pytest.raises(MediaError, match="broken.mp4"):
        track_video(bad, tmp_path / "t", backend)
    with pytest.raises(MediaError, match="speech_only"):
        track_video(audio_only_file(tmp_path / "speech_only.m4a"), tmp_path / "t", backend)
    with pytest.raises(ValueError, match="person_detector"):
        build_backend("offline", person_detector="yolov9")
