"""The transformers backend on a tiny random-weight Qwen2.5-VL built here (no download).

Random weights produce meaningless text; what is checked is the real path: loading a folder with
AutoModelForImageTextToText, building a processor (image-only fallback, no torchvision here),
the frames reaching the vision tower as image tokens, generation, token counts, the cache.
"""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.mllm import (
    MODEL_CALLS,
    MllmClient,
    ModelNotConfigured,
    parse_registry,
)

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("PIL", reason="the image-only processor uses transformers' PIL image backend")

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]


def build_tiny_qwen25_vl(folder):
    """A 2-layer Qwen2.5-VL with random weights, a byte-level BPE tokenizer trained on a few words,
    and Qwen2-VL's image processor (PIL backend), saved like a hub snapshot."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
    )
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["describe the person in these frames", "a man in a white shirt speaks"] * 5, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = TEMPLATE
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    config = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=2048,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, window_size=56, fullatt_block_indexes=[0]),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(0)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    Qwen2VLImageProcessorPil(min_pixels=56 * 56, max_pixels=112 * 112).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_qwen25_vl(tmp_path_factory.mktemp("tiny-qwen25-vl"))


def local_registry(path):
    return parse_registry({"models": {"local": {
        "backend": "transformers", "model_id": "Qwen/Qwen2.5-VL-3B-Instruct", "local_path": str(path),
        "max_frames": 2, "max_side": 112, "max_concurrency": 1,
    }}}, environ={})


def test_tiny_qwen25_vl_generates_from_frames_and_caches(tiny_model, warehouse, man_talking_head):
    from hvbench_assets.core.mllm import sample_frames

    client = MllmClient(local_registry(tiny_model), warehouse)
    frames = sample_frames(man_talking_head, n_frames=4)
    params = {"max_tokens": 6, "temperature": 0.0}
    r = client.chat("local", "describe the person", frames=frames, system="be brief", params=params)
    assert r.ok, r.error
    assert r.frames_sent == 2 and 0 < r.tokens_out <= 6
    text_only = client.chat("local", "describe the person", system="be brief", params=params)
    assert text_only.ok and r.tokens_in > text_only.tokens_in + 2  # each frame became vision tokens
    row = warehouse.rows(MODEL_CALLS, id=r.call_id)[0]
    assert row["backend"] == "transformers" and row["response"]["generated_token_ids"]
    assert row["response"]["prompt_text"].count("<|vision_start|>") == 2
    sent = client.requests_sent
    again = client.chat("local", "describe the person", frames=frames, system="be brief", params=params)
    assert again.cached and again.text == r.text and client.requests_sent == sent


def test_missing_weights_fail_fast_naming_how_to_seed_them(tmp_path, warehouse):
    client = MllmClient(local_registry(tmp_path / "not-downloaded"), warehouse)
    r = client.chat("local", "hi")
    assert not r.ok and not r.transient and r.attempts == 1
    assert "no weights for Qwen/Qwen2.5-VL-3B-Instruct" in r.error
    assert "huggingface-cli download" in r.error and "HVBENCH_MLLM_LOCAL_LOCAL_PATH" in r.error


def test_unset_local_path_is_a_configuration_error():
    reg = parse_registry({"models": {"local": {"backend": "transformers", "model_id": "Qwen/Qwen2.5-VL-3B-Instruct"}}},
                         environ={})
    with pytest.raises(ModelNotConfigured, match="HVBENCH_MLLM_LOCAL_LOCAL_PATH"):
        MllmClient(reg).chat("local", "hi", frames=[np.zeros((8, 8, 3), np.uint8)])


def test_local_model_runs_on_the_cpu_here_in_float32(tiny_model, warehouse, man_talking_head):
    from hvbench_assets.core.mllm import sample_frames

    reg = local_registry(tiny_model)
    spec = reg.get("local")
    assert spec.device == "auto" and spec.provenance_model == "Qwen/Qwen2.5-VL-3B-Instruct; device=cpu"
    r = MllmClient(reg, warehouse).chat("local", "who speaks", frames=sample_frames(man_talking_head, n_frames=2),
                                        params={"max_tokens": 3, "temperature": 0.0})
    assert r.ok, r.error
    response = warehouse.rows(MODEL_CALLS, id=r.call_id)[0]["response"]
    assert response["device"] == "cpu" and response["dtype"] == "float32"


def test_local_model_and_inputs_go_to_the_gpu_in_half_precision(tiny_model, warehouse, man_talking_head, monkeypatch):
    from hvbench_assets.core.mllm import sample_frames
    from hvbench_assets.core.mllm.local import TransformersBackend
    from hvbench_assets_tests.fake_cuda import FakeCuda

    gpu = FakeCuda(monkeypatch)
    client = MllmClient(local_registry(tiny_model), warehouse)
    r = client.chat("local", "who speaks", frames=sample_frames(man_talking_head, n_frames=2),
                    params={"max_tokens": 3, "temperature": 0.0})
    assert r.ok, r.error
    assert gpu.asked("module") == {"cuda:0"}
    assert "cuda:0" in gpu.asked("tensor")  # token ids, masks, pixel values: every input tensor
    model = client._backends["transformers"]._models["local"][0]
    assert model.dtype == torch.bfloat16
    response = warehouse.rows(MODEL_CALLS, id=r.call_id)[0]["response"]
    assert response["device"] == "cuda:0" and response["dtype"] == "bfloat16"

    gpu.requests.clear()
    backend = TransformersBackend()
    model, processor, device, dtype, _ = backend.load(local_registry(tiny_model).get("local"))
    inputs = processor(text=["<|image_pad|> hi"], images=[np.zeros((56, 56, 3), np.uint8)], return_tensors="pt")
    moved = inputs.to(device, getattr(torch, dtype))
    assert moved["pixel_values"].dtype == torch.bfloat16 and moved["input_ids"].dtype == torch.long


def test_a_gpu_asked_for_but_absent_is_a_configuration_error(tiny_model, warehouse):
    reg = parse_registry({"models": {"local": {
        "backend": "transformers", "model_id": "Qwen/Qwen2.5-VL-3B-Instruct", "local_path": str(tiny_model),
    }}}, environ={"HVBENCH_MLLM_LOCAL_DEVICE": "cuda"})
    r = MllmClient(reg, warehouse).chat("local", "hi")
    assert not r.ok and r.fatal and r.attempts == 1
    assert "HVBENCH_MLLM_LOCAL_DEVICE is 'cuda' but torch sees no CUDA GPU" in r.error
