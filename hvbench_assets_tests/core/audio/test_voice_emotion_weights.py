from dataclasses import asdict

import numpy as np
import pytest

from hvbench_assets.core.audio.emotion import NoOfflineEmotion
from hvbench_assets.core.audio.tags import AstTagger
from hvbench_assets.core.audio.voice import (
    PitchDemographer,
    Wav2Vec2Demographer,
    _age_gender_model_class,
    decide,
    demographics_from_outputs,
    rule_violations,
)
from hvbench_assets.core.audio.weights import ModelUnavailable, require_hf_model
from hvbench_assets.core.media import load_audio
from hvbench_assets_tests.speech import synthesize_speech

SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank."


@pytest.mark.parametrize("voice,pitch,expected", [
    ("en-us", 20, "male"), ("en-us", 50, "male"), ("en-us+f3", 50, "female"), ("en-us+f3", 90, "child"),
])
def test_pitch_classes_synthetic_voices(tmp_path, voice, pitch, expected):
    audio = load_audio(synthesize_speech(SENTENCE, tmp_path / "v.wav", voice=voice, pitch=pitch))
    est = PitchDemographer().estimate(audio)
    assert est.status == "ok" and est.method == "heuristic"
    assert est.voice_class == expected, est
    assert 0.5 <= est.confidence <= 1.0
    assert rule_violations(asdict(est)) == []


def test_pitch_on_real_clips(man_talking_head, two_children):
    man = PitchDemographer().estimate(load_audio(man_talking_head))
    assert man.voice_class == "male" and man.pitch_hz < 165
    kids = PitchDemographer().estimate(load_audio(two_children))
    # an adult man (off screen) talks first at ~125-150 Hz with clear harmonics; the children's
    # voices (300-400 Hz) follow: the clip's baseline is the man's, the segments show both in time order
    assert kids.status == "ok" and rule_violations(asdict(kids)) == [] and rule_violations(asdict(man)) == []
    classes = [s["voice_class"] for s in kids.segments]
    assert classes[0] == "male" and kids.segments[0]["end_s"] < 1.5
    assert "child" in classes and kids.segments[classes.index("child")]["start_s"] > 2.5


def test_pitch_on_silence_is_unavailable():
    est = PitchDemographer().estimate(np.zeros(32000, np.float32))
    assert est.status == "unavailable" and "voiced frames" in est.reason


def test_offline_emotion_is_unavailable_with_reason():
    e = NoOfflineEmotion().recognise(np.zeros(16000, np.float32))
    assert e.status == "unavailable" and e.emotion is None and "SenseVoice" in e.reason


def test_hub_models_fail_fast_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf"))
    # fast = no connection attempted (the libraries' own offline path retries for ~20 s); counted, not timed
    import socket

    attempts = []
    real_connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda self, addr: attempts.append(addr) or real_connect(self, addr))
    for backend, call in ((AstTagger(hub_offline=True), "tag"), (Wav2Vec2Demographer(hub_offline=True), "estimate")):
        with pytest.raises(ModelUnavailable) as err:
            getattr(backend, call)(np.zeros(16000, np.float32))
        assert backend.model_id in str(err.value) and str(tmp_path / "hf") in str(err.value)
        assert "huggingface-cli download" in str(err.value)
    assert attempts == [], f"the offline failure tried to connect to {attempts}"
    assert require_hf_model(str(tmp_path)) == str(tmp_path)  # a local folder is used as is


def test_age_gender_head_matches_the_checkpoint_layout():
    import torch
    from transformers import Wav2Vec2Config

    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_feat_extract_layers=2)
    cfg.final_dropout = 0.0
    net = _age_gender_model_class()(cfg).eval()
    keys = set(net.state_dict())
    assert {"age.dense.weight", "age.out_proj.weight", "gender.out_proj.bias"} <= keys
    with torch.no_grad():
        hidden, age, probs = net(torch.zeros(1, 16000))
    assert age.shape == (1, 1) and probs.shape == (1, 3) and torch.allclose(probs.sum(), torch.tensor(1.0))


def test_one_rule_from_probabilities_to_class_confidence_and_stored_probs():
    d = decide({"male": 0.3, "female": 0.5, "child": 0.2})
    assert (d.voice_class, d.confidence, d.child_prob) == ("female", 0.5, 0.2)
    assert d.gender_probs == {"male": 0.375, "female": 0.625}
    assert decide({"male": 2, "female": 1, "child": 1}).class_probs == {"male": 0.5, "female": 0.25, "child": 0.25}
    # the row of the bug report: male with confidence 1.0 while its gender probabilities said female 0.593
    bad = {"status": "ok", "voice_class": "male", "confidence": 1.0, "gender_probs": {"male": 0.407, "female": 0.593},
           "child_prob": 0.0, "class_probs": {"male": 0.407, "female": 0.593, "child": 0.0}}
    problems = rule_violations(bad)
    assert any("argmax" in p for p in problems) and any("confidence" in p for p in problems)
    assert rule_violations({"status": "ok", "voice_class": "male", "confidence": 0.9}) != []  # no probabilities
    assert rule_violations({"status": "no_speech", "voice_class": None}) == []


def test_heuristic_probabilities_are_soft_steps_at_the_pitch_boundaries():
    demo = PitchDemographer()
    for hz, expected in ((110, "male"), (165, None), (220, "female"), (400, "child")):
        probs, _ = demo.probabilities(np.full(50, float(hz)))
        d = decide(probs)
        if expected is None:  # on the male/female boundary: a coin toss, and the row says so
            assert abs(probs["male"] - 0.5) < 0.01 and d.confidence <= 0.51
        else:
            assert d.voice_class == expected and d.confidence > 0.9


def test_model_outputs_map_to_a_row():
    row = demographics_from_outputs(0.34, np.array([0.1, 0.8, 0.1]))  # female, male, child
    assert row.voice_class == "male" and row.age_years == 34.0 and row.child_prob == 0.1
    assert row.gender_probs == {"male": pytest.approx(0.889, abs=1e-3), "female": pytest.approx(0.111, abs=1e-3)}
    assert demographics_from_outputs(0.08, np.array([0.2, 0.1, 0.7])).voice_class == "child"
    assert rule_violations(asdict(row)) == [] and row.class_probs == {"male": 0.8, "female": 0.1, "child": 0.1}
