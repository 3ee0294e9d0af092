"""Marked videos: boxes drawn where asked, H.264 with the source audio."""

import av
import numpy as np
import pytest

from hvbench_assets.core.media import iter_frames, probe_video
from hvbench_assets.core.render import render_marked
from hvbench_assets.testkit.media_factory import moving_square_video


def test_red_box_and_numbers_drawn_with_audio(tmp_path):
    src = moving_square_video(tmp_path / "src.mp4", seconds=1.0, size=(320, 240))
    boxes = {f: {0: (20.0, 20.0, 120.0, 120.0), 1: (180.0, 60.0, 300.0, 200.0)} for f in range(25)}
    dst = render_marked(src, tmp_path / "out.mp4", boxes, highlight=0, numbers={0: 1, 1: 2})
    info = probe_video(dst)
    assert info.has_audio and info.video_codec == "h264" and info.frame_count == 25
    with av.open(str(dst)) as c:
        assert c.streams.video[0].codec_context.pix_fmt == "yuv420p"
    frame = next(iter_frames(dst)).image.astype(int)
    # the red box edge (left side of track 0, 2 px wide here) is red; track 1's edge is amber, not red
    left_edge = frame[40:100, 20:22].reshape(-1, 3).mean(0)
    assert left_edge[2] > 180 and left_edge[1] < 90 and left_edge[0] < 90
    other_edge = frame[100:180, 180:182].reshape(-1, 3).mean(0)
    assert other_edge[1] > 150 and other_edge[2] > 180 and other_edge[0] < 90
    # outside the boxes the frame is untouched (no overlay tint)
    src_frame = next(iter_frames(src)).image.astype(int)
    assert np.abs(frame[150:170, 60:100] - src_frame[150:170, 60:100]).mean() < 6


def test_needs_something_to_draw(tmp_path):
    src = moving_square_video(tmp_path / "src.mp4", seconds=0.4)
    with pytest.raises(ValueError):
        render_marked(src, tmp_path / "o.mp4", {})
