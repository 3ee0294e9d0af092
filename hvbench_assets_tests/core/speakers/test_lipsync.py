"""Offline active-speaker scoring on face crops made here (dlib + core.media), as L1 would make them."""

import numpy as np
import pytest

from hvbench_assets.core.media import cut_clip, load_audio
from hvbench_assets.core.speakers.lipsync import LipSyncScorer
from hvbench_assets.core.speakers.rules import PersonClass
from hvbench_assets.core.speakers.scoring import track_audio, track_row
from hvbench_assets_tests.core.speakers.face_crops import face_crop_tracks


@pytest.fixture(scope="module")
def man_crops(tmp_path_factory):
    from hvbench_assets_tests.conftest import shared_clip

    path = shared_clip("man_talking_head.mp4")
    tracks, fps = face_crop_tracks(path, tmp_path_factory.mktemp("man_crops"))
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


@pytest.mark.xfail(strict=False, reason=(
    "known L7 limit (issue 18, README 'Who speaks'): her lips follow her voice (sync 0.3-0.4 at best) no better "
    "than they follow it displaced by a second or more, so since 2026-11-24 (the chance floor) she is not "
    "flagged: missed rather than guessed. Before, she passed or failed with where L1's track started."))
def test_the_woman_facing_the_camera_speaks(two_people_talking, tmp_path):
    # 13-22.5 s: she talks facing the camera while the other girl braids her hair behind her
    window = cut_clip(two_people_talking, tmp_path / "window.mp4", 13.0, 22.5)
    tracks, fps = face_crop_tracks(window, tmp_path / "tracks")
    assert fps == 30.0 and tracks
    front = tracks[0]  # the longest track in that window is her face
    assert front.face_size > 60
    row = track_row(LipSyncScorer(), front.frames, load_audio(window), fps, front.first_frame)
    # seen to fail once in a long CI process (longest_run 0) and never alone: say which tracks it had
    assert row["speaking"], (row, [(t.first_frame, len(t.frames), round(t.face_size, 1)) for t in tracks])


def test_a_still_photo_panned_by_the_camera_is_not_speaking(tmp_path):
    """A photograph of a person panned and zoomed like a handheld camera, with
    speech on the soundtrack. The mouth never moves, so chance audio-visual correlations of the moving
    image must not make her a speaker (they did on ~30 % of frames before the still-mouth rule)."""
    from hvbench_assets.core.media import write_video
    from hvbench_assets.demo.main import _speech
    from hvbench_assets.demo.samples import panned_photo

    frames = panned_photo(4.0)
    if frames is None:
        pytest.skip("scikit-image (the `demo` extra) is not installed")
    shot = write_video(tmp_path / "shot.mp4", frames, fps=25, audio=_speech("Hello, this is the hvbench demo. "
                                                                              "The first shot ends here.", 4.0))
    tracks, fps = face_crop_tracks(shot, tmp_path / "tracks")
    assert len(tracks) == 1
    row = track_row(LipSyncScorer(), tracks[0].frames, load_audio(shot), fps, tracks[0].first_frame)
    assert not row["speaking"], row["longest_run"]


def test_track_audio_starts_at_the_first_frame():
    audio = np.arange(16000 * 4, dtype=np.float32)
    seg = track_audio(audio, first_frame=30, n_frames=15, fps=30.0)
    assert seg[0] == 16000 and len(seg) == 8000
    assert len(track_audio(audio, 110, 30, 30.0)) == 16000  # padded past the end


def test_the_chance_level_is_the_same_a_few_shifts_at_a_time(man_crops, monkeypatch):
    """On a long track chance_sync scores its shifts a few at a time (bounded memory): the same level, bit for bit,
    as all shifts in one pass, on the real talking head's mouth and voice."""
    from hvbench_assets.core.speakers import lipsync

    path, tracks, fps = man_crops
    scorer = LipSyncScorer()
    sig = scorer.prepare(tracks[0].frames, track_audio(load_audio(path), tracks[0].first_frame, len(tracks[0].frames), fps), fps)
    whole, per_signal = scorer.chance_sync(sig, fps)
    monkeypatch.setattr(lipsync, "SHIFT_FRAMES", 3 * len(sig.mouth))  # three shifts per pass
    again, per_signal_again = scorer.chance_sync(sig, fps)
    assert np.isfinite(whole) and whole == again and np.array_equal(per_signal, per_signal_again)
