"""The full backends' real loading and inference code, run on tiny random checkpoints saved locally
(the paper's weights cannot be downloaded here). Outputs are meaningless; shapes and mapping are not."""

import sys

import numpy as np
import pytest

from hvbench_assets.core.audio.asr import SenseVoiceTranscriber
from hvbench_assets.core.audio.emotion import SenseVoiceEmotion
from hvbench_assets.core.audio.sensevoice import SenseVoice
from hvbench_assets.core.audio.tags import AstTagger
from hvbench_assets.core.audio.voice import Wav2Vec2Demographer, _age_gender_model_class
from hvbench_assets.core.devices import DeviceUnavailable
from hvbench_assets.core.media import load_audio


@pytest.fixture(scope="module")
def tiny_ast(tmp_path_factory):
    from transformers import ASTConfig, ASTFeatureExtractor, ASTForAudioClassification

    path = tmp_path_factory.mktemp("ast")
    cfg = ASTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, max_length=128)
    cfg.id2label = dict(enumerate(["Speech", "Music", "Silence", "Dog"]))
    cfg.label2id = {v: k for k, v in cfg.id2label.items()}
    ASTForAudioClassification(cfg).save_pretrained(path)
    ASTFeatureExtractor(max_length=128).save_pretrained(path)
    return path


def test_ast_tagger_loads_a_local_checkpoint(tiny_ast, man_talking_head):
    tags = AstTagger(model_id=str(tiny_ast), top_k=3).tag(load_audio(man_talking_head))
    assert len(tags.tags) == 3 and tags.sound_type == tags.tags[0]["label"]
    assert {t["label"] for t in tags.tags} <= {"Speech", "Music", "Silence", "Dog"}
    assert all(0 <= t["score"] <= 1 for t in tags.tags)
    if tags.is_speech:  # speech timing still comes from the VAD
        assert tags.speech_segments and tags.speech_s > 0


def test_ast_tags_long_clips_window_by_window(tiny_ast, two_people_talking):
    audio = load_audio(two_people_talking)  # 22.5 s: three AST windows, best score per class
    tags = AstTagger(model_id=str(tiny_ast), top_k=4).tag(audio)
    first = AstTagger(model_id=str(tiny_ast), top_k=4).tag(audio[:160000])
    best = {t["label"]: t["score"] for t in tags.tags}
    assert all(best[t["label"]] >= t["score"] - 1e-4 for t in first.tags)


def test_wav2vec2_age_gender_loads_a_local_checkpoint(tmp_path, man_talking_head):
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor

    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_feat_extract_layers=2,
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
    _age_gender_model_class()(cfg).save_pretrained(tmp_path)
    Wav2Vec2FeatureExtractor().save_pretrained(tmp_path)
    est = Wav2Vec2Demographer(model_id=str(tmp_path)).estimate(load_audio(man_talking_head))
    assert est.status == "ok" and est.method == "model" and est.voice_class in ("male", "female", "child")
    assert 0 <= est.child_prob <= 1 and est.age_years is not None
    assert sum(est.gender_probs.values()) == pytest.approx(1, abs=1e-2)


class RecordingSenseVoiceModel:
    """Stands in for funasr's loaded model (weights boundary): returns SenseVoice's raw output format."""

    def __init__(self):
        self.calls = 0

    def generate(self, input, **kwargs):
        self.calls += 1
        assert input.dtype == np.float32 and kwargs["language"] == "auto"
        return [{"key": "clip", "text": "<|en|><|HAPPY|><|Speech|><|withitn|>Hello there, nice to meet you.",
                 "timestamp": [[120, 480], ["there", 480, 900]]}]


def test_sensevoice_feeds_transcript_and_emotion_with_one_call():
    engine = SenseVoice()
    engine._model = RecordingSenseVoiceModel()
    audio = np.zeros(16000, np.float32)
    t = SenseVoiceTranscriber(engine).transcribe(audio, [])
    e = SenseVoiceEmotion(engine).recognise(audio)
    assert t.text == "Hello there, nice to meet you." and t.language == "en"
    assert t.words == [{"start_s": 0.12, "end_s": 0.48}, {"word": "there", "start_s": 0.48, "end_s": 0.9}]
    assert e.status == "ok" and e.emotion == "happy" and e.score == 1.0
    assert engine._model.calls == 1  # L8 and L9 share one recognition per clip


def tiny_wav2vec2_age_gender(folder):
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor

    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_feat_extract_layers=2,
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
    _age_gender_model_class()(cfg).save_pretrained(folder)
    Wav2Vec2FeatureExtractor().save_pretrained(folder)
    return folder


def test_audio_models_default_to_auto_which_is_the_cpu_here(tiny_ast, tmp_path):
    from hvbench_assets.core.audio.backends import AudioBackendConfig, build
    from hvbench_assets.defs.resources import build_resources

    assert build_resources()["audio_models"].device == "auto" and AudioBackendConfig().device == "auto"
    tagger = build("tagger", AudioBackendConfig(full=True, ast_model=str(tiny_ast)))
    assert tagger.device == "cpu" and tagger.model == f"{tiny_ast}; device=cpu"  # what rows and metadata show
    voice = build("voice", AudioBackendConfig(full=True, age_gender_model=str(tmp_path)))
    assert voice.device == "cpu" and voice.model.endswith("; device=cpu")
    assert SenseVoice(model_dir=str(tmp_path)).name == f"{tmp_path}; device=cpu"
    from hvbench_assets.core.speakers.asd_runtime import torch_device

    assert torch_device(AudioBackendConfig().asd_device) == "cpu"  # Light-ASD's torch path: the same rule


def test_ast_and_wav2vec2_put_model_and_inputs_on_the_gpu_torch_sees(tiny_ast, tmp_path, monkeypatch, man_talking_head):
    from hvbench_assets_tests.fake_cuda import FakeCuda

    audio = load_audio(man_talking_head)
    on_cpu = AstTagger(model_id=str(tiny_ast), top_k=3, device="cpu").tag(audio)
    gpu = FakeCuda(monkeypatch)
    tagger = AstTagger(model_id=str(tiny_ast), top_k=3)
    assert tagger.device == "cuda:0" and tagger.model.endswith("; device=cuda:0")
    tags = tagger.tag(audio)
    assert gpu.asked("module") == {"cuda:0"} and gpu.asked("tensor") == {"cuda:0"}  # weights and spectrograms
    assert tags.tags == on_cpu.tags  # the same computation, wherever it runs

    gpu.requests.clear()
    voice = Wav2Vec2Demographer(model_id=str(tiny_wav2vec2_age_gender(tmp_path)), device="cuda")
    est = voice.estimate(audio)
    assert est.status == "ok" and voice.model.endswith("; device=cuda:0")
    assert gpu.asked("module") == {"cuda:0"} and gpu.asked("tensor") == {"cuda:0"}
    with pytest.raises(DeviceUnavailable, match="HVBENCH_AUDIO_DEVICE"):
        Wav2Vec2Demographer(model_id=str(tmp_path), device="cuda:1")  # one GPU seen


def test_sensevoice_asks_funasr_for_the_resolved_device(tmp_path, monkeypatch):
    import types

    from hvbench_assets_tests.fake_cuda import FakeCuda

    asked = []
    fake_funasr = types.ModuleType("funasr")  # funasr is not installed here: its constructor is the boundary
    fake_funasr.AutoModel = lambda **kwargs: asked.append(kwargs) or RecordingSenseVoiceModel()
    monkeypatch.setitem(sys.modules, "funasr", fake_funasr)
    (tmp_path / "model.pt").write_bytes(b"weights")
    SenseVoice(model_dir=str(tmp_path)).load()
    FakeCuda(monkeypatch)
    engine = SenseVoice(model_dir=str(tmp_path))
    engine.load()
    assert [a["device"] for a in asked] == ["cpu", "cuda:0"] and engine.name.endswith("; device=cuda:0")
