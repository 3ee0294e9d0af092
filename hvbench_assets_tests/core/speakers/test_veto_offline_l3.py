"""The L7 voice/face veto on real offline rows: the talking man of man_talking_head with his voice raised by
1.6x in pitch (timing kept, so his lips still follow it). L10's offline pitch model hears a woman (0.93) and
L7 flags his track; L3 (SSR-Net on his face crops) says male. Only a confident L3 row may overturn the flag."""

from pathlib import Path

import numpy as np
import pytest

from hvbench_assets.core.audio.voice import PitchDemographer
from hvbench_assets.core.media import load_audio, write_video
from hvbench_assets.core.speakers.lipsync import LipSyncScorer
from hvbench_assets.core.speakers.rules import face_class, voice_class
from hvbench_assets.core.speakers.scoring import track_row
from hvbench_assets.core.vision.demographics import ConfidenceRule, SsrNetDemographics, demographics_rows
from hvbench_assets.core.vision.tables import Track
from hvbench_assets_tests.core.speakers.face_crops import face_crop_tracks


def pitch_up(audio: np.ndarray, factor: float, grain_s: float = 0.04, rate: int = 16000) -> np.ndarray:
    """Raise the pitch by `factor` without changing timing: each 40 ms grain is read `factor` times faster and
    overlap-added at its own place (Hann windows, half overlap)."""
    n = int(grain_s * rate)
    hop, win = n // 2, np.hanning(n)
    out, norm = np.zeros(len(audio) + n), np.zeros(len(audio) + n)
    src = np.arange(n) * factor
    for t in range(0, len(audio) - int(n * factor), hop):
        out[t:t + n] += np.interp(t + src, np.arange(len(audio)), audio) * win
        norm[t:t + n] += win
    return (out / np.maximum(norm, 1e-3))[: len(audio)].astype(np.float32)


@pytest.fixture(scope="module")
def dubbed_man(tmp_path_factory):
    from hvbench_assets_tests.conftest import shared_clip

    path = shared_clip("man_talking_head.mp4")
    work = tmp_path_factory.mktemp("dubbed")
    tracks, fps = face_crop_tracks(path, work / "tracks")
    man = tracks[0]
    clip = write_video(work / "face.mp4", iter(man.frames), fps=fps)
    track = Track("m", 0, man.first_frame, man.first_frame + len(man.frames) - 1, 0.0, len(man.frames) / fps, 1.0,
                  man.face_size, fps, clip, None)
    return man, fps, track, pitch_up(load_audio(path), 1.6)


def test_a_womans_voice_on_the_mans_face_is_vetoed_only_by_a_confident_l3(dubbed_man):
    man, fps, track, audio = dubbed_man
    voice = PitchDemographer().estimate(audio)
    assert voice.voice_class == "female" and voice.confidence >= 0.7
    voice_row = {"status": "ok", "voice_class": voice.voice_class, "confidence": voice.confidence}
    est = SsrNetDemographics()
    confident = demographics_rows([track], est, rule=ConfidenceRule(min_accuracy=0.7))[0]
    default = demographics_rows([track], est)[0]
    assert confident["status"] == "ok" and confident["gender"] == "male" and confident["gender_share"] == 1.0
    assert default["status"] == "low_confidence"  # measured 0.73 < 0.9

    vetoed = track_row(LipSyncScorer(), man.frames, audio, fps, man.first_frame,
                       voice=voice_class(voice_row), face=face_class(confident))
    assert vetoed["raw_speaking"] and not vetoed["speaking"]
    assert vetoed["veto_reason"].startswith("voice is female") and "face is male" in vetoed["veto_reason"]
    kept = track_row(LipSyncScorer(), man.frames, audio, fps, man.first_frame,
                     voice=voice_class(voice_row), face=face_class(default))
    assert kept["raw_speaking"] and kept["speaking"] and kept["veto_reason"] is None and kept["face_class"] is None
