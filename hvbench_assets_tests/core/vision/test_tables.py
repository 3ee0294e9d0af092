"""The L1 table contract: rows written by the tracker read back as Track objects."""

from hvbench_assets.core.vision import (
    HUMAN_TRACK_BOXES,
    HUMAN_TRACKS,
    boxes_by_frame,
    load_tracks,
    number_tracks,
)


def _store(warehouse, vid="v1"):
    tracks = [
        {"track_id": 0, "status": "ok", "first_frame": 0, "last_frame": 2, "first_s": 0.0, "last_s": 0.08,
         "n_frames": 3, "coverage": 0.5, "face_size_median": 40.0, "fps": 25.0, "face_clip_path": "/x/f0.mp4",
         "body_clip_path": "/x/b0.mp4", "face_embedding": [0.1] * 128},
        {"track_id": 1, "status": "ok", "first_frame": 1, "last_frame": 1, "first_s": 0.04, "last_s": 0.04,
         "n_frames": 1, "coverage": 1 / 6, "face_size_median": 30.0, "fps": 25.0},
    ]
    boxes = [
        {"track_id": 0, "frame": f, "t": f / 25, "face_x1": 300.0, "face_y1": 10.0, "face_x2": 340.0, "face_y2": 50.0,
         "body_x1": 260.0, "body_y1": 0.0, "body_x2": 380.0, "body_y2": 200.0, "face_source": "detected",
         "body_source": "estimated", "score": 0.9}
        for f in range(3)
    ] + [{"track_id": 1, "frame": 1, "t": 0.04, "face_x1": 10.0, "face_y1": 10.0, "face_x2": 40.0, "face_y2": 40.0,
          "body_x1": 0.0, "body_y1": 0.0, "body_x2": 60.0, "body_y2": 150.0, "face_source": "interpolated",
          "body_source": "filled", "score": None}]
    prov = {"backend": "offline", "model": "test"}
    warehouse.replace(HUMAN_TRACKS, {"video_id": vid}, tracks, provenance=prov)
    warehouse.replace(HUMAN_TRACK_BOXES, {"video_id": vid}, boxes, provenance=prov)


def test_load_tracks_round_trip(warehouse):
    _store(warehouse)
    tracks = load_tracks(warehouse, "v1")
    assert [t.track_id for t in tracks] == [0, 1]
    assert tracks[0].n_frames == 3 and len(tracks[0].boxes) == 3
    assert tracks[0].box_at(2).face == (300.0, 10.0, 340.0, 50.0)
    assert tracks[0].box_at(5) is None
    assert tracks[0].face_embedding == [0.1] * 128
    assert str(tracks[0].face_clip_path) == "/x/f0.mp4" and tracks[1].face_clip_path is None
    assert boxes_by_frame(tracks)[1] == {0: (300.0, 10.0, 340.0, 50.0), 1: (10.0, 10.0, 40.0, 40.0)}
    assert boxes_by_frame(tracks, "body")[0] == {0: (260.0, 0.0, 380.0, 200.0)}
    # numbers go left to right from 1: track 1 is on the left
    assert number_tracks(tracks) == {1: 1, 0: 2}


def test_no_faces_row_gives_no_tracks(warehouse):
    warehouse.replace(HUMAN_TRACKS, {"video_id": "v2"}, [{"track_id": None, "status": "no_faces", "reason": "none"}])
    assert load_tracks(warehouse, "v2") == []
    assert load_tracks(warehouse, "never") == []
