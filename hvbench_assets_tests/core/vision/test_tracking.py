"""L1 on real clips (offline backend): tracks, boxes on the right person, crop clips, one decode pass."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.media import iter_frames, load_audio, probe_video
from hvbench_assets.core.vision import pipeline
from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.count import TrackSpan, count_people
from hvbench_assets.core.vision.pipeline import TrackingParams, track_video
from hvbench_assets.testkit.media_factory import concat_videos, moving_square_video
from hvbench_assets_tests.conftest import shared_clip


@pytest.fixture(scope="module")
def backend():
    return build_backend("offline")  # YuNet faces


@pytest.fixture(scope="module")
def hog():
    return build_backend("offline", face_detector="hog")  # dlib HOG with its fine pass and rotated second looks


def _people(result) -> int:
    spans = [TrackSpan(t["track_id"], t["first_frame"], t["last_frame"], t["face_embedding"]) for t in result.tracks]
    return count_people(spans).count


@pytest.fixture(scope="module")
def man(tmp_path_factory, backend):
    src = shared_clip("man_talking_head.mp4")
    return src, track_video(src, tmp_path_factory.mktemp("man") / "tracks", backend)


def test_yunet_detects_at_its_own_size_and_the_rows_say_so(man, backend):
    """An 844x844 clip is detected at YuNet's 480 px (recall as at 640 px in 0.58x the time, face_recall.py);
    the stored params record the size that ran, and an explicit size wins."""
    src, res = man
    assert backend.detect_max_side == 480
    assert {t["params"]["detect_max_side"] for t in res.tracks} == {480}
    frame = next(iter_frames(src)).image
    assert pipeline._resolved(TrackingParams(detect_max_side=640), backend).detect_max_side == 640
    assert len(pipeline.detect_faces(frame, backend)) == 1


def test_large_faces_are_detected_at_the_quick_size_between_full_passes(tmp_path, man, backend):
    """While every live face is large, YuNet gets a 320 px image (0.37x the time); once a second, and on
    frames where the quick pass loses a face, it gets the full 480 px. The tracks are those of full passes only."""
    src, res = man
    assert {t["params"]["quick_max_side"] for t in res.tracks} == {320}
    by = {}
    for b in res.boxes:
        by.setdefault(b["detector"], []).append(b["frame"])
    assert len(by["quick"]) > 3 * len(by["primary"])  # most detection frames are quick ...
    step, fps = round(res.fps / 6.0), res.fps
    full_every = round(fps / step)  # ... but every second is a full pass (fine_every_s = 1)
    assert all(f % (step * full_every) != 0 for f in by["quick"])
    full = track_video(src, tmp_path / "full", backend, TrackingParams(quick_max_side=0))
    assert {b["detector"] for b in full.boxes} == {None, "primary"}
    assert [(t["first_frame"], t["last_frame"]) for t in full.tracks] == [(t["first_frame"], t["last_frame"]) for t in res.tracks]


def test_small_faces_never_get_the_quick_pass(tmp_path, backend):
    """The grid's five panels hold faces too small for 320 px: every detection is a full pass."""
    res = track_video(shared_clip("five_people_grid.mp4"), tmp_path / "t", backend)
    assert {b["detector"] for b in res.boxes} == {None, "primary"} and len(res.tracks) >= 5


def test_single_person_gives_one_stable_track(man):
    src, res = man
    info = probe_video(src)
    assert len(res.tracks) == 1
    tr = res.tracks[0]
    assert tr["track_id"] == 0 and tr["first_frame"] <= 5 and tr["last_frame"] >= info.frame_count - 6
    assert tr["coverage"] > 0.9 and res.face_presence > 0.9
    assert tr["n_frames"] == tr["last_frame"] - tr["first_frame"] + 1
    # one box row per frame, detected on every k-th frame, interpolated between
    frames = [b["frame"] for b in res.boxes]
    assert frames == list(range(tr["first_frame"], tr["last_frame"] + 1))
    sources = {b["face_source"] for b in res.boxes}
    assert sources == {"detected", "interpolated"}
    assert {b["body_source"] for b in res.boxes} == {"detected", "filled"}  # YOLOX-nano person boxes
    # the face sits in the upper middle of this frontal close-up, and the body box contains it
    b = res.boxes[len(res.boxes) // 2]
    cx, cy = (b["face_x1"] + b["face_x2"]) / 2, (b["face_y1"] + b["face_y2"]) / 2
    assert 0.3 * info.width < cx < 0.7 * info.width and 0.15 * info.height < cy < 0.6 * info.height
    assert b["body_x1"] <= b["face_x1"] and b["body_x2"] >= b["face_x2"] and b["body_y2"] > b["face_y2"]
    assert tr["face_embedding"] is not None and len(tr["face_embedding"]) == 128


def test_crop_clips_hold_every_frame_at_clip_fps_with_audio(man):
    src, res = man
    tr = res.tracks[0]
    for path, size in ((tr["face_clip_path"], (224, 224)), (tr["body_clip_path"], (256, 384))):
        info = probe_video(path)
        assert info.frame_count == tr["n_frames"] and abs(info.fps - res.fps) < 0.01
        assert (info.width, info.height) == size and info.video_codec == "h264" and info.has_audio
        audio_s = len(load_audio(path)) / 16000
        assert abs(audio_s - tr["n_frames"] / res.fps) < 0.1
    # crop frame i shows source frame first_frame + i: the crop follows the face, so it is mostly skin/face
    # rather than the map behind; compare crop brightness with the source face region on one frame
    i = tr["n_frames"] // 2
    crop = next(f.image for k, f in enumerate(iter_frames(tr["face_clip_path"])) if k == i)
    box = next(b for b in res.boxes if b["frame"] == tr["first_frame"] + i)
    frame = next(f.image for f in iter_frames(src) if f.index == tr["first_frame"] + i)
    region = frame[int(box["face_y1"]):int(box["face_y2"]), int(box["face_x1"]):int(box["face_x2"])]
    centre = crop[72:152, 72:152]
    assert np.abs(centre.mean(axis=(0, 1)) - region.mean(axis=(0, 1))).max() < 25


def test_two_children_give_two_simultaneous_tracks(tmp_path, backend, two_children):
    res = track_video(two_children, tmp_path / "t", backend)
    assert len(res.tracks) == 2 and _people(res) == 2
    left, right = sorted(res.tracks, key=lambda t: res.boxes[[b["track_id"] for b in res.boxes].index(t["track_id"])]["face_x1"])
    assert left["coverage"] > 0.8 and right["coverage"] > 0.8
    # ids follow first appearance, ties left to right
    firsts = [(t["first_frame"], t["track_id"]) for t in res.tracks]
    assert firsts == sorted(firsts)


def test_two_people_talking_counts_two_people(tmp_path, backend, two_people_talking):
    res = track_video(two_people_talking, tmp_path / "t", backend)
    assert len(res.tracks) >= 2 and _people(res) == 2
    # the woman behind, tilting her head in the last second, is still found
    end = res.frame_count - 1
    last_second = {b["track_id"] for b in res.boxes if b["frame"] == end - 15}
    assert len(last_second) == 2
    assert {b["detector"] for b in res.boxes} <= {None, "primary", "quick"}  # YuNet alone, no second looks


def test_one_person_reappearing_is_merged_by_face_descriptor(tmp_path, backend, man_talking_head):
    blank = moving_square_video(tmp_path / "blank.mp4", seconds=3.0, size=(480, 360))
    video, _ = concat_videos([man_talking_head, blank, man_talking_head], tmp_path / "again.mp4")
    res = track_video(video, tmp_path / "t", backend)
    assert len(res.tracks) == 2  # the face is gone for 3 s: two L1 tracks ...
    assert _people(res) == 1  # ... of one person


def test_no_faces_gives_no_tracks_and_no_files(tmp_path, backend):
    video = moving_square_video(tmp_path / "sq.mp4", seconds=1.5)
    res = track_video(video, tmp_path / "t", backend)
    assert res.tracks == [] and res.boxes == [] and res.frame_count == 38
    assert list((tmp_path / "t").iterdir()) == []


def test_short_tracks_are_dropped(tmp_path, backend, man_talking_head):
    params = TrackingParams(min_track_s=10.0)
    res = track_video(man_talking_head, tmp_path / "t", backend, params)
    assert res.tracks == [] and list((tmp_path / "t").iterdir()) == []


def test_the_clip_is_decoded_once(tmp_path, backend, two_children, monkeypatch):
    calls = []
    real = pipeline.iter_frames

    def counting(path, *a, **kw):
        calls.append(str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(pipeline, "iter_frames", counting)
    res = track_video(two_children, tmp_path / "t", backend, TrackingParams(max_embeddings=1))
    assert calls == [str(two_children)] and len(res.tracks) == 2


def test_clip_without_audio_gives_silent_crops(tmp_path, backend, man_talking_head):
    from hvbench_assets.core.media import write_video

    video = write_video(tmp_path / "mute.mp4", (f.image for f in iter_frames(man_talking_head, end_s=2.0)), fps=25)
    res = track_video(video, tmp_path / "t", backend)
    assert len(res.tracks) == 1
    info = probe_video(res.tracks[0]["face_clip_path"])
    assert not info.has_audio and info.frame_count == res.tracks[0]["n_frames"]


class _PersonBoxesAroundFaces:
    """Stands in for YOLO person weights (absent here): on every other call returns a body box under each
    HOG face plus a wide box far to the left, so the full backend's matching and filling run for real."""

    model = "stand-in-person"

    def __init__(self):
        from hvbench_assets.core.vision.detectors import DlibHogFaceDetector

        self._faces = DlibHogFaceDetector()
        self.calls = 0

    def detect(self, image):
        self.calls += 1
        if self.calls % 2 == 0:
            return []
        boxes = [(0.0, 0.0, 5.0, float(image.shape[0]))]
        for d in self._faces.detect(image):
            x1, y1, x2, y2 = d.box
            w = x2 - x1
            boxes.append((x1 - w, y1 - 0.3 * w, x2 + w, float(image.shape[0])))
        return boxes


def test_full_style_backend_matches_and_fills_body_boxes(tmp_path, man_talking_head):
    from hvbench_assets.core.vision.backends import VisionBackend
    from hvbench_assets.core.vision.detectors import DlibHogFaceDetector

    be = VisionBackend("full", DlibHogFaceDetector(), _PersonBoxesAroundFaces(), None)
    res = track_video(man_talking_head, tmp_path / "t", be, TrackingParams(max_embeddings=0))
    assert len(res.tracks) == 1 and res.tracks[0]["body_source"] in ("detected", "filled")
    assert {b["body_source"] for b in res.boxes} == {"detected", "filled"}
    for b in res.boxes:  # the thin box at the left edge is never chosen
        assert b["body_x2"] > 100 and b["body_x1"] <= b["face_x2"] and b["body_x2"] >= b["face_x1"]


def test_small_faces_in_a_large_frame_are_found_by_the_fine_pass(tmp_path, hog, man_talking_head):
    import cv2

    from hvbench_assets.core.media import write_video

    def frames():  # two ~120 px faces on a 1920x1080 canvas: below HOG's size at the 640 px detection scale
        for f in iter_frames(man_talking_head, end_s=3.0):
            canvas = np.full((1080, 1920, 3), 90, np.uint8)
            canvas[600:900, 200:500] = cv2.resize(f.image, (300, 300), interpolation=cv2.INTER_AREA)
            canvas[100:400, 1400:1700] = cv2.resize(f.image[:, ::-1], (300, 300), interpolation=cv2.INTER_AREA)
            yield canvas

    video = write_video(tmp_path / "small.mp4", frames(), fps=25)
    coarse_only = track_video(video, tmp_path / "a", hog, TrackingParams(fine_max_side=0, max_embeddings=0))
    assert coarse_only.tracks == []
    res = track_video(video, tmp_path / "b", hog, TrackingParams(max_embeddings=0))
    assert len(res.tracks) == 2 and all(t["coverage"] > 0.6 for t in res.tracks)
    assert all(100 < t["face_size_median"] < 160 for t in res.tracks)
    # once the fine pass found them, the enlarged look around each track finds them on (almost) every
    # detection frame instead of once per second
    fine_only = track_video(video, tmp_path / "c", build_backend("offline", face_detector="hog", rescue=False),
                            TrackingParams(max_embeddings=0))
    assert len(fine_only.tracks) == 2 and all(t["n_detections"] <= 5 for t in fine_only.tracks)
    assert all(t["n_detections"] >= 12 and t["n_rescued"] >= 8 for t in res.tracks)
    rescued = [b for b in res.boxes if (b["detector"] or "").startswith("rescue:")]
    assert rescued and all(b["face_source"] == "detected" for b in rescued)
    assert sum(t["n_rescued"] for t in res.tracks) == len(rescued)


def test_tiny_faces_need_the_enlarged_fine_pass_with_hog_not_with_yunet(tmp_path, hog, backend, man_talking_head):
    import cv2

    from hvbench_assets.core.media import write_video

    def frames():  # a ~45 px face in a 1280x720 frame: below HOG's window even at full resolution
        for f in iter_frames(man_talking_head, end_s=2.0):
            canvas = np.full((720, 1280, 3), 100, np.uint8)
            canvas[300:412, 600:712] = cv2.resize(f.image, (112, 112), interpolation=cv2.INTER_AREA)
            yield canvas

    video = write_video(tmp_path / "tiny.mp4", frames(), fps=25)
    assert track_video(video, tmp_path / "a", hog, TrackingParams(max_embeddings=0)).tracks == []
    res = track_video(video, tmp_path / "b", hog, TrackingParams(fine_enlarge=2.0, fine_max_side=2560, max_embeddings=0))
    (track,) = res.tracks
    assert track["coverage"] > 0.8 and 30 < track["face_size_median"] < 70 and track["n_detections"] >= 8
    # YuNet finds it on every detection frame at the ordinary 640 px scale
    (track,) = track_video(video, tmp_path / "c", backend, TrackingParams(max_embeddings=0)).tracks
    assert track["coverage"] > 0.9 and 30 < track["face_size_median"] < 70 and track["n_detections"] >= 11


def _face_aligned_frames(src, end_s, place=(180, 100, 300), out=(480, 360)):
    """Frames of `src` cropped and scaled so its first detected face lands at `place` (x, y, size)."""
    import cv2

    from hvbench_assets.core.vision.detectors import DlibHogFaceDetector

    frames = [f.image for f in iter_frames(src, end_s=end_s)]
    x1, y1, x2, y2 = max(DlibHogFaceDetector().detect(frames[0]), key=lambda d: d.box[2] - d.box[0]).box
    k = place[2] / (x2 - x1)
    m = np.array([[k, 0, place[0] - k * x1], [0, k, place[1] - k * y1]])
    return [cv2.warpAffine(f, m, out) for f in frames]


def test_short_gap_keeps_one_track_but_not_across_a_different_face(tmp_path, backend, man_talking_head, two_children):
    from hvbench_assets.core.media import write_video

    man = _face_aligned_frames(man_talking_head, 2.0, place=(180, 100, 120))
    child = _face_aligned_frames(two_children, 2.0, place=(180, 100, 120))
    blank = [np.full_like(man[0], 90)] * 25  # 1 s without a face
    same = write_video(tmp_path / "same.mp4", man + blank + man, fps=25)
    res = track_video(same, tmp_path / "a", backend)
    assert len(res.tracks) == 1  # the gap is bridged (boxes interpolated through it)
    other = write_video(tmp_path / "other.mp4", man + blank + child, fps=25)
    res = track_video(other, tmp_path / "b", backend)
    assert len(res.tracks) == 2 and _people(res) == 2  # same place, different face: no link


def test_rendered_red_box_sits_on_the_stored_face_box(tmp_path, man):
    from hvbench_assets.core.render import render_marked
    from hvbench_assets.core.vision import (
        HUMAN_TRACK_BOXES,
        HUMAN_TRACKS,
        boxes_by_frame,
        load_tracks,
    )
    from hvbench_assets.core.warehouse import Warehouse

    src, res = man
    wh = Warehouse(tmp_path / "wh.duckdb")
    wh.replace(HUMAN_TRACKS, {"video_id": "m"}, res.tracks)
    wh.replace(HUMAN_TRACK_BOXES, {"video_id": "m"}, res.boxes)
    tracks = load_tracks(wh, "m")
    out = render_marked(src, tmp_path / "red.mp4", boxes_by_frame(tracks), highlight=0, start_s=1.0, end_s=1.6)
    for f in iter_frames(out):
        img = f.image.astype(int)
        red = (img[..., 2] > 200) & (img[..., 1] < 60) & (img[..., 0] < 60)
        ys, xs = np.nonzero(red)
        box = tracks[0].box_at(25 + f.index).face  # the rendered clip starts at source frame 25
        assert abs(xs.min() - box[0]) < 6 and abs(xs.max() - box[2]) < 6
        assert abs(ys.min() - box[1]) < 6 and abs(ys.max() - box[3]) < 6


def test_a_failing_detector_leaves_no_half_written_crops(tmp_path, man_talking_head):
    from hvbench_assets.core.vision.backends import VisionBackend
    from hvbench_assets.core.vision.detectors import DlibHogFaceDetector

    class BreaksOnThirdFrame(DlibHogFaceDetector):
        calls = 0

        def detect(self, image):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("detector crashed")
            return super().detect(image)

    be = VisionBackend("offline", BreaksOnThirdFrame(), None, None)
    with pytest.raises(RuntimeError, match="detector crashed"):
        track_video(man_talking_head, tmp_path / "t", be)
    assert [p.name for p in (tmp_path / "t").iterdir()] == []
