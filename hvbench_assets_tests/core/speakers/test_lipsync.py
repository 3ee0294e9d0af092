"""Offline active-speaker scoring on face crops made here (dlib + core.media), as L1 would make them."""

import numpy as np
import pytest

from hvbench_assets.core.media import load_audio
from hvbench_assets.core.speakers.lipsync import LipSyncScorer
from hvbench_assets.core.speakers.rules import PersonClass
from hvbench_assets.core.speakers.scoring import track_audio, track_row
from hvbench_assets_tests.core.speakers.face_crops import face_crop_tracks


@pytest.fixture(scope="module")
def man_crops():
    from hvbench_assets_tests.conftest import shared_clip

    path = shared_clip("man_talking_head.mp4")
    tracks, fps = face_crop_tracks(path, upsample=0)
    return path, tracks, fps


def test_talking_head_is_one_speaker(man_crops):
    path, tracks, fps = man_crops
    assert len(tracks) == 1 and fps == 25.0
    row = track_row(LipSyncScorer(), tracks[0].frames, load_audio(path), fps, tracks[0].first_frame)
    assert row["n_frames"] == len(row["scores"]) == 125
    assert row["speaking"] and row["longest_run"] > 24


def test_no_voice_means_no_speaker(man_crops):
    _, tracks, fps = man_crops
    n = len(tracks[0].frames)
    t = np.arange(int(n / fps * 16000)) / 16000
    for audio in (np.zeros(len(t), np.float32), (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)):
        row = track_row(LipSyncScorer(), tracks[0].frames, audio, fps, 0)
        assert not row["speaking"] and row["longest_run"] == 0


def test_veto_overturns_a_positive(man_crops):
    path, tracks, fps = man_crops
    row = track_row(LipSyncScorer(), tracks[0].frames, load_audio(path), fps, 0,
                    voice=PersonClass("child", 0.9), face=PersonClass("male", 0.9))
    assert row["raw_speaking"] and not row["speaking"] and "child" in row["veto_reason"]


def test_the_woman_facing_the_camera_speaks(two_people_talking):
    # 13-22.5 s: she talks facing the camera while the other girl braids her hair behind her
    tracks, fps = face_crop_tracks(two_people_talking, start_s=13.0, end_s=22.5, upsample=1)
    assert fps == 30.0 and tracks
    front = tracks[0]  # the longest track in that window is her face
    assert front.boxes[0][2] - front.boxes[0][0] > 60
    row = track_row(LipSyncScorer(), front.frames, load_audio(two_people_talking), fps, front.first_frame)
    assert row["speaking"], row["longest_run"]


def test_track_audio_starts_at_the_first_frame():
    audio = np.arange(16000 * 4, dtype=np.float32)
    seg = track_audio(audio, first_frame=30, n_frames=15, fps=30.0)
    assert seg[0] == 16000 and len(seg) == 8000
    assert len(track_audio(audio, 110, 30, 30.0)) == 16000  # padded past the end
