"""Frame sampling and encoding for MLLM requests, on the real clips."""

from __future__ import annotations

import cv2
import numpy as np

from hvbench_assets.core.media import probe_video
from hvbench_assets.core.mllm import cap_frames, encode_jpeg, sample_frames
from hvbench_assets.core.mllm.frames import encode_wav


def test_n_frames_are_evenly_spaced_and_shrunk(two_people_talking):
    frames = sample_frames(two_people_talking, n_frames=5, max_side=240)
    assert len(frames) == 5 and all(max(f.shape[:2]) == 240 for f in frames)
    # evenly spread over 22.5 s: consecutive picks differ (the clip moves)
    assert all(np.abs(a.astype(int) - b.astype(int)).mean() > 1 for a, b in zip(frames, frames[1:]))


def test_fps_sampling_and_cap(man_talking_head):
    dur = probe_video(man_talking_head).duration_s
    every_half_second = sample_frames(man_talking_head, fps=2, max_side=128)
    assert abs(len(every_half_second) - dur * 2) <= 1
    capped = sample_frames(man_talking_head, fps=2, n_frames=4, max_side=128)
    assert len(capped) == 4


def test_time_window(two_people_talking):
    frames = sample_frames(two_people_talking, n_frames=3, start_s=10.0, end_s=12.0, max_side=64)
    assert len(frames) == 3


def test_cap_keeps_ends_and_order():
    seq = list(range(10))
    assert cap_frames(seq, 4) == [0, 3, 6, 9] and cap_frames(seq, 20) == seq and cap_frames(seq, 1) == [5]


def test_jpeg_and_wav_encoding():
    img = np.zeros((300, 600, 3), np.uint8)
    img[:, 300:] = 255
    out = cv2.imdecode(np.frombuffer(encode_jpeg(img, 90, max_side=200), np.uint8), cv2.IMREAD_COLOR)
    assert out.shape == (100, 200, 3) and out[:, :90].mean() < 10 and out[:, 110:].mean() > 245
    wav = encode_wav(np.zeros(1600, np.float32), 16000)
    assert wav[:4] == b"RIFF" and len(wav) == 44 + 3200


def test_short_clips_give_each_frame_once(tmp_path):
    from hvbench_assets.testkit.media_factory import moving_square_video

    clip = moving_square_video(tmp_path / "short.mp4", seconds=0.2, fps=25, tone_hz=None)  # 5 frames
    frames = sample_frames(clip, n_frames=8, max_side=None)
    assert len(frames) == 5
    assert all(np.abs(a.astype(int) - b.astype(int)).sum() > 0 for a, b in zip(frames, frames[1:]))
