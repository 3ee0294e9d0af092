"""The default L7 method (methods.py) on real face crops: who speaks, the silence gate, a corrupt crop, and the
lip-sync fallback when the shipped Light-ASD weights fail their check."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from hvbench_assets.core import published_weights
from hvbench_assets.core.media import iter_frames, load_audio
from hvbench_assets.core.speakers.methods import DEFAULT_METHOD, METHODS, MethodScorer
from hvbench_assets.core.speakers.scoring import TrackFrames, clip_rows
from hvbench_assets_tests.conftest import shared_clip
from hvbench_assets_tests.core.speakers.face_crops import face_crop_tracks


@pytest.fixture(scope="module")
def man(tmp_path_factory):
    path = shared_clip("man_talking_head.mp4")
    tracks, fps = face_crop_tracks(path, tmp_path_factory.mktemp("method_crops"))
    t = tracks[0]
    return TrackFrames(1, t.first_frame, len(t.frames), lambda: iter(t.frames)), load_audio(path), fps


def test_default_method_flags_the_talking_man(man):
    track, audio, fps = man
    row = clip_rows(MethodScorer(), [track], audio, fps)[0]
    assert row["status"] == "ok" and row["method"] == DEFAULT_METHOD and row["method_note"] is None
    assert row["speaking"] and row["longest_run"] > 24


@pytest.mark.parametrize("method", METHODS)
def test_no_voice_means_no_speaker_with_every_method(man, method):
    track, audio, fps = man
    t = np.arange(len(audio)) / 16000
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    row = clip_rows(MethodScorer(method), [track], tone, fps)[0]
    assert row["method"] == method and not row["speaking"], row["longest_run"]


def test_a_corrupt_crop_fails_alone(man, tmp_path):
    track, audio, fps = man
    broken = tmp_path / "crop.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    bad = TrackFrames(2, 0, 50, lambda: (f.image for f in iter_frames(broken)))
    rows = clip_rows(MethodScorer(), [bad, track], audio, fps)
    assert rows[0]["status"] == "failed" and "crop.mp4" in rows[0]["reason"] and not rows[0]["speaking"]
    assert rows[1]["status"] == "ok" and rows[1]["speaking"]


def test_falls_back_to_lipsync_when_the_shipped_weights_fail_their_check(man, tmp_path, monkeypatch):
    track, audio, fps = man
    for f in published_weights.WEIGHTS_DIR.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    enc = tmp_path / published_weights.entry("light_asd_encoder_onnx")["file"]
    enc.write_bytes(enc.read_bytes()[:1000])  # truncated
    monkeypatch.setattr(published_weights, "WEIGHTS_DIR", tmp_path)
    scorer = MethodScorer("combined")
    rows = clip_rows(scorer, [track], audio, fps)
    assert rows[0]["method"] == "lipsync" and "lip-sync used instead" in rows[0]["method_note"]
    assert "light_asd_encoder_onnx" in rows[0]["method_note"] and "truncated" in rows[0]["method_note"]
    assert rows[0]["status"] == "ok" and rows[0]["speaking"]  # lip-sync finds the man on its own
    assert scorer.model.startswith("dlib-68")


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="speaker_method 'asd'"):
        MethodScorer("asd")
