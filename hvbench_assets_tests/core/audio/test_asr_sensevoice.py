import socket
import time

import numpy as np
import pytest

from hvbench_assets.core.audio.asr import PocketsphinxTranscriber
from hvbench_assets.core.audio.sensevoice import SenseVoice, parse_sensevoice
from hvbench_assets.core.audio.tags import VadEnergyTagger
from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.media import load_audio


def test_pocketsphinx_transcribes_the_talking_head_in_english(man_talking_head):
    audio = load_audio(man_talking_head)
    segs = VadEnergyTagger().tag(audio).speech_segments
    t = PocketsphinxTranscriber().transcribe(audio, segs)
    assert t.language == "en" and len(t.text) > 20
    assert "california" in t.text  # the speaker names his district
    assert all(0 <= w["start_s"] < w["end_s"] <= 5.1 for w in t.words)
    assert [w["start_s"] for w in t.words] == sorted(w["start_s"] for w in t.words)
    assert not any(w["word"].startswith(("<", "[")) for w in t.words)


def test_pocketsphinx_on_silence_gives_no_words():
    t = PocketsphinxTranscriber().transcribe(np.zeros(32000, np.float32), [])
    assert t.text == "" and t.language is None


def test_parse_sensevoice_segments_language_emotion_event():
    r = parse_sensevoice("<|en|><|HAPPY|><|Speech|><|withitn|>Hello there. "
                         "<|en|><|NEUTRAL|><|Speech|><|withitn|>How are you doing today?")
    assert r.text == "Hello there. How are you doing today?"
    assert r.language == "en" and r.emotion == "neutral"  # weighted by text length
    assert [s.event for s in r.segments] == ["Speech", "Speech"]
    assert r.emotion_share == pytest.approx(24 / 36, abs=1e-3)


def test_parse_sensevoice_without_speech_and_plain_text():
    r = parse_sensevoice("<|nospeech|><|EMO_UNKNOWN|><|BGM|><|woitn|>")
    assert r.text == "" and r.language is None and r.emotion is None and r.segments[0].event == "BGM"
    assert parse_sensevoice("just text").text == "just text"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_sensevoice_fails_fast_naming_what_is_missing(tmp_path, monkeypatch):
    engine = SenseVoice(hub_endpoint=f"http://127.0.0.1:{closed_port()}", modelscope_cache=str(tmp_path / "ms"))
    start = time.monotonic()
    with pytest.raises(ModelUnavailable) as err:
        engine.recognise(np.zeros(16000, np.float32))
    assert time.monotonic() - start < 5
    msg = str(err.value)
    assert "iic/SenseVoiceSmall" in msg and str(tmp_path / "ms") in msg and "unreachable" in msg
    assert "funasr" in msg  # not installed here: said too


def test_sensevoice_model_dir_without_weights_is_reported(tmp_path):
    with pytest.raises(ModelUnavailable, match="holds no model.pt"):
        SenseVoice(model_dir=str(tmp_path)).check()
