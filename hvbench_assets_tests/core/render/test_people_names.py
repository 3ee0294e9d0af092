"""One name per person on every picture: the key frame and the speaker score plot name a track by the clip's
person number (core/vision `number_tracks`) and its track id, on a generated video."""

from __future__ import annotations

import cv2

from hvbench_assets.core.render.keyframe import frame_people, render_key_frame
from hvbench_assets.core.speakers.plot import line_label, render_score_plot
from hvbench_assets.core.vision.tables import number_tracks
from hvbench_assets.testkit.labels_factory import track
from hvbench_assets.testkit.media_factory import moving_square_video


def test_key_frame_and_score_plot_name_tracks_by_the_clip_numbers(tmp_path):
    clip = moving_square_video(tmp_path / "clip.mp4", seconds=2.0, size=(320, 240))
    # track ids in order of appearance, numbers left to right: track 2 (x=20) is 1, track 0 (x=120) 2, track 1 3
    tracks = [track(0, 0, 49, x=120), track(1, 10, 49, x=220), track(2, 5, 49, x=20)]
    numbers = number_tracks(tracks)
    assert numbers == {2: 1, 0: 2, 1: 3}
    path, frame, _ = render_key_frame(clip, tracks, tmp_path / "key.jpg")
    assert cv2.imread(str(path)) is not None and frame >= 10  # a frame showing all three
    assert frame_people(tracks, frame) == ["P1 t2", "P2 t0", "P3 t1"]
    # a question drawing only some people keeps their numbers
    assert frame_people(tracks[:2], frame, numbers) == ["P2 t0", "P3 t1"]
    rows = [{"track_id": t.track_id, "first_frame": t.first_frame, "fps": 25.0, "scores": [0.5] * 10,
             "speaking": t.track_id == 0} for t in tracks]
    assert render_score_plot(rows, tmp_path / "plot.png", numbers=numbers).is_file()
    assert [line_label(r, numbers) for r in rows] == ["P2 t0 speaks", "P3 t1", "P1 t2"]
    assert line_label(rows[1], None) == "t1"
