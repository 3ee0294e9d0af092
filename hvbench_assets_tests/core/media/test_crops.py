"""Crop geometry and the streaming crop-clip writer."""

import numpy as np
import pytest

from hvbench_assets.core.media import MediaError, load_audio, probe_video
from hvbench_assets.core.media.crops import CropClipWriter, crop_to


def _image():
    img = np.zeros((200, 300, 3), np.uint8)
    img[50:150, 100:200] = (0, 255, 0)  # a green square
    return img


def test_square_crop_scales_the_box_to_the_output():
    out = crop_to(_image(), (100, 50, 200, 150), 224, 224)
    assert out.shape == (224, 224, 3)
    assert (out[5:-5, 5:-5, 1] > 200).all()  # the green square fills the crop


def test_body_crop_keeps_aspect_and_pads_black():
    out = crop_to(_image(), (100, 50, 200, 150), 256, 384)  # square box into a tall canvas
    assert out.shape == (384, 256, 3)
    assert (out[192, 10:-10, 1] > 200).all()  # full width used
    assert out[:60].max() == 0 and out[-60:].max() == 0  # letterbox bars top and bottom


def test_box_leaving_the_frame_is_padded_not_shifted():
    out = crop_to(_image(), (250, 0, 350, 100), 100, 100)  # right half outside the 300 px image
    assert out[:, 60:].max() == 0 and out[:, :45].max() == 0  # no green in this region, black outside


def test_writer_streams_frames_and_takes_audio_at_the_end(tmp_path):
    span = {}
    w = CropClipWriter(tmp_path / "c.mp4", fps=25, audio=lambda: np.zeros(span["n"], np.float32) + 0.1)
    for i in range(50):
        w.push(np.full((64, 64, 3), i * 4, np.uint8))
    span["n"] = 2 * 48000  # known only after the last frame
    path = w.close()
    info = probe_video(path)
    assert info.frame_count == 50 and info.has_audio
    assert abs(len(load_audio(path)) / 16000 - 2.0) < 0.05


def test_writer_errors_reach_the_caller_and_abort_removes_the_file(tmp_path):
    w = CropClipWriter(tmp_path / "empty.mp4", fps=25)
    with pytest.raises(MediaError):
        w.close()  # no frames
    w = CropClipWriter(tmp_path / "gone.mp4", fps=25)
    w.push(np.zeros((32, 32, 3), np.uint8))
    w.abort()
    assert not (tmp_path / "gone.mp4").exists()


def test_render_crop_recuts_a_track_from_stored_boxes(tmp_path, man_talking_head):
    from hvbench_assets.core.render import render_crop

    boxes = {f: (300.0, 150.0, 560.0, 410.0) for f in range(10, 40)}
    out = render_crop(man_talking_head, tmp_path / "c.mp4", boxes, 112, 112, fps=25.0)
    info = probe_video(out)
    assert info.frame_count == 30 and (info.width, info.height) == (112, 112) and info.has_audio
    assert abs(len(load_audio(out)) / 16000 - 30 / 25) < 0.05
