import numpy as np
import pytest

from hvbench_assets.core.audio.cache import cache_path, clip_audio
from hvbench_assets.core.audio.tags import MUSIC, OTHER, SILENCE, SPEECH, VadEnergyTagger
from hvbench_assets.core.audio.vad import speech_probabilities, speech_segments
from hvbench_assets.core.media import NoAudioError, file_sha256, load_audio
from hvbench_assets.testkit.media_factory import moving_square_video
from hvbench_assets_tests.speech import synthesize_speech


def tone(seconds=3.0, hz=440.0, amp=0.3):
    t = np.arange(int(seconds * 16000)) / 16000
    return (amp * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def test_synthesized_speech_is_speech_with_timed_segments(tmp_path):
    wav = synthesize_speech("The weather is lovely today and we will walk to the park.", tmp_path / "s.wav")
    audio = np.concatenate([np.zeros(16000, np.float32), load_audio(wav)])  # 1 s of silence first
    tags = VadEnergyTagger().tag(audio)
    assert tags.is_speech and tags.sound_type == SPEECH
    assert tags.speech_segments[0][0] >= 0.8  # speech starts after the silence
    assert tags.speech_s > 1.5
    scores = {t["label"]: t["score"] for t in tags.tags}
    assert abs(scores[SPEECH] + scores[SILENCE] + scores[OTHER] - 1) < 1e-3 and scores[SILENCE] > 0.1
    assert scores[MUSIC] < 0.1 and not tags.music.is_music  # music is an overlay, not a fourth share


def test_tone_and_silence_are_not_speech():
    t = VadEnergyTagger().tag(tone())
    assert not t.is_speech and t.sound_type == OTHER and t.speech_segments == []
    s = VadEnergyTagger().tag(np.zeros(48000, np.float32))
    assert not s.is_speech and s.sound_type == SILENCE


def test_melody_with_percussion_is_music():
    rng = np.random.default_rng(1)
    t = np.arange(4000) / 16000
    notes = []
    for i in range(32):  # 8 s of harmonic notes with decaying noise hits on every other beat
        f = [262, 294, 330, 349, 392, 440, 494, 523][rng.integers(0, 8)]
        x = sum((0.2 / k) * np.sin(2 * np.pi * f * k * t) for k in range(1, 6)) * np.exp(-3 * t)
        if i % 2 == 0:
            x[:800] += 0.3 * rng.standard_normal(800) * np.exp(-np.arange(800) / 200)
        notes.append(x)
    tags = VadEnergyTagger().tag(np.concatenate(notes).astype(np.float32))
    assert not tags.is_speech and tags.sound_type == MUSIC and tags.tags[0] == {"label": OTHER, "score": 1.0}
    assert tags.music.is_music and tags.music.music_s > 6


def test_real_clips_hold_speech(man_talking_head, two_people_talking):
    for clip in (man_talking_head, two_people_talking):
        tags = VadEnergyTagger().tag(load_audio(clip))
        assert tags.is_speech, clip.name


def test_segments_bridge_short_gaps():
    probs = np.array([0.9] * 20 + [0.1] * 5 + [0.9] * 20 + [0.0] * 40 + [0.9] * 3, np.float32)
    segs = speech_segments(probs)  # 5 chunks = 0.16 s gap bridged; the last 0.1 s blip dropped
    assert len(segs) == 1 and segs[0][0] == 0.0 and abs(segs[0][1] - 45 / 31.25) < 1e-3


def test_vad_probability_per_chunk_length():
    assert len(speech_probabilities(np.zeros(16000, np.float32))) == 32


def test_audio_decoded_once_and_cached_on_disk(man_talking_head, tmp_path):
    sha = file_sha256(man_talking_head)
    a = clip_audio(man_talking_head, sha, tmp_path)
    assert cache_path(tmp_path, sha).exists() and a.dtype == np.float32 and abs(len(a) / 16000 - 5.0) < 0.1
    assert clip_audio("/nonexistent.mp4", sha, tmp_path) is a  # served from memory, file not touched


def test_clip_without_audio_raises_and_is_remembered(tmp_path):
    video = moving_square_video(tmp_path / "silent.mp4", seconds=1.0, tone_hz=None)
    sha = file_sha256(video)
    for _ in range(2):
        with pytest.raises(NoAudioError):
            clip_audio(video, sha, tmp_path)
    assert cache_path(tmp_path, sha).with_suffix(".noaudio").exists()
