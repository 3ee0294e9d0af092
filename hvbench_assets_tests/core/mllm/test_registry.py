"""The model registry: the shipped config file, environment overrides, messages naming what to set."""

from __future__ import annotations

import pytest

from hvbench_assets.core.mllm import ModelNotConfigured, load_registry, parse_registry
from hvbench_assets.settings_table import registry_settings

CONFIG = {
    "defaults": {"max_frames": 16, "timeout_s": 60.0},
    "models": {
        "local-vllm": {"model_id": "Qwen/Qwen2.5-VL-7B-Instruct", "weight": 2.0},
        "cloud": {"model_id": "gpt-x", "base_url": "https://api.example/v1", "api_key_env": "CLOUD_KEY", "max_frames": 4},
    },
}


def test_shipped_registry_parses_and_holds_no_keys():
    reg = load_registry(environ={})
    assert {"qwen25_vl", "gpt4o", "gemini", "qwen25_vl_local"} <= set(reg.models)
    assert reg.models["gemini"].accepts_audio and reg.models["qwen25_vl_local"].backend == "transformers"
    for spec in reg.models.values():
        assert not spec.api_key_env or spec.api_key_env.isupper()  # a variable name, not a key


def test_defaults_and_entries_merge():
    reg = parse_registry(CONFIG, environ={})
    assert reg.models["local-vllm"].max_frames == 16 and reg.models["local-vllm"].timeout_s == 60.0
    assert reg.models["cloud"].max_frames == 4 and reg.models["local-vllm"].weight == 2.0


def test_environment_overrides_fields_and_active_set():
    env = {
        "HVBENCH_MLLM_LOCAL_VLLM_BASE_URL": "http://gpu:8000/v1",
        "HVBENCH_MLLM_LOCAL_VLLM_MODEL": "Qwen/Qwen2.5-VL-72B-Instruct",
        "HVBENCH_MLLM_LOCAL_VLLM_MAX_FRAMES": "32",
        "HVBENCH_MLLM_LOCAL_VLLM_ACCEPTS_AUDIO": "true",
        "HVBENCH_MLLM_MODELS": "local-vllm",
        "HVBENCH_DESCRIBER_MODEL": "local-vllm",
    }
    reg = parse_registry(CONFIG, environ=env, **registry_settings(env))
    spec = reg.models["local-vllm"]
    assert (spec.base_url, spec.model_id, spec.max_frames, spec.accepts_audio) == (
        "http://gpu:8000/v1", "Qwen/Qwen2.5-VL-72B-Instruct", 32, True)
    assert [m.name for m in reg.active()] == ["local-vllm"]
    assert reg.describer().name == "local-vllm"


def test_unconfigured_models_fail_naming_the_settings():
    keys: dict[str, str] = {}  # where the key variables are read, at call time (the environment in use)
    reg = parse_registry(CONFIG, environ={}, keys=keys)
    with pytest.raises(ModelNotConfigured, match="HVBENCH_MLLM_LOCAL_VLLM_BASE_URL"):
        reg.get("local-vllm")
    with pytest.raises(ModelNotConfigured, match="CLOUD_KEY"):
        reg.get("cloud")
    with pytest.raises(ModelNotConfigured, match="HVBENCH_DESCRIBER_MODEL"):
        reg.describer()
    with pytest.raises(ModelNotConfigured, match="unknown model 'nope'"):
        reg.get("nope")
    assert reg.active() == []
    keys["CLOUD_KEY"] = "k"
    assert [m.name for m in reg.active()] == ["cloud"]


def test_bad_entries_are_rejected():
    with pytest.raises(ValueError, match="unknown fields"):
        parse_registry({"models": {"x": {"model_id": "m", "api_key": "sk-oops"}}}, environ={})
    with pytest.raises(ValueError, match="backend"):
        parse_registry({"models": {"x": {"model_id": "m", "backend": "carrier-pigeon"}}}, environ={})


def test_endpoint_drops_credentials_and_query_from_the_url():
    reg = parse_registry({"models": {"gw": {"model_id": "m", "base_url": "https://bob:pw@gw.example:8443/v1?key=SECRET"}}},
                         environ={})
    spec = reg.get("gw")
    assert spec.endpoint == "https://gw.example:8443/v1"
    assert "SECRET" not in str(spec.describe()) and "pw" not in str(spec.describe())


def test_params_are_adapted_to_what_the_endpoint_accepts():
    reg = parse_registry({"models": {"o": {
        "model_id": "o-mini", "base_url": "https://api.example/v1", "extra_params": {"seed": 7},
        "rename_params": {"max_tokens": "max_completion_tokens"}, "drop_params": ["temperature"],
    }}}, environ={})
    assert reg.get("o").request_params({"temperature": 0, "max_tokens": 64}) == {"seed": 7, "max_completion_tokens": 64}


def test_a_set_but_empty_variable_clears_the_field(monkeypatch):
    monkeypatch.delenv("CLOUD_KEY", raising=False)
    reg = parse_registry(CONFIG, environ={"HVBENCH_MLLM_CLOUD_API_KEY_ENV": ""})
    assert reg.models["cloud"].api_key_env == "" and reg.get("cloud").api_key() == "EMPTY"  # usable without a key
    cleared = parse_registry(CONFIG, environ={"HVBENCH_MLLM_CLOUD_BASE_URL": "",
                                              "HVBENCH_MLLM_CLOUD_ACCEPTS_AUDIO": ""})
    assert cleared.models["cloud"].base_url == "" and cleared.models["cloud"].accepts_audio is False
    with pytest.raises(ModelNotConfigured, match="HVBENCH_MLLM_CLOUD_BASE_URL"):
        cleared.get("cloud")
    # unset = the file's value
    assert parse_registry(CONFIG, environ={}).models["cloud"].api_key_env == "CLOUD_KEY"


@pytest.mark.parametrize("value,needle", [("", "set but empty"), ("lots", "'lots'"), ("7.5", "'7.5'")])
def test_a_bad_numeric_variable_is_an_error_naming_it(value, needle):
    with pytest.raises(ValueError, match=f"HVBENCH_MLLM_CLOUD_MAX_FRAMES.*{needle}|HVBENCH_MLLM_CLOUD_MAX_FRAMES {needle}"):
        parse_registry(CONFIG, environ={"HVBENCH_MLLM_CLOUD_MAX_FRAMES": value})


def test_models_side_by_side_from_variables_alone(monkeypatch):
    env = {"HVBENCH_MLLM_VLLM_A_BASE_URL": "http://a:8000/v1", "HVBENCH_MLLM_VLLM_A_MODEL": "org/a",
           "HVBENCH_MLLM_VLLM_B_BASE_URL": "http://b:8000/v1", "HVBENCH_MLLM_VLLM_B_MODEL": "org/b",
           "HVBENCH_MLLM_VLLM_B_MAX_FRAMES": "8", "HVBENCH_MLLM_MODELS": "vllm_a,vllm_b"}
    reg = parse_registry(CONFIG, environ=env, **registry_settings(env))
    a, b = reg.active()
    assert (a.name, a.model_id, a.base_url, a.max_frames, a.timeout_s) == ("vllm_a", "org/a", "http://a:8000/v1", 16, 60.0)
    assert (b.model_id, b.max_frames) == ("org/b", 8)


def test_a_model_defined_by_its_variables_alone_is_active_without_naming_it():
    # what the demo's help says to set: the endpoint and the model id, nothing else
    env = {"HVBENCH_MLLM_MYMODEL_BASE_URL": "http://h:8000/v1", "HVBENCH_MLLM_MYMODEL_MODEL": "org/m",
           "HVBENCH_MLLM_LOCAL_VLLM_BASE_URL": "http://gpu:8000/v1", "HVBENCH_MLLM_EMPTY_BASE_URL": " "}
    reg = parse_registry(CONFIG, environ=env, **registry_settings(env))
    assert reg.env_names() == ["mymodel"]  # local-vllm is a file entry; an empty URL defines nothing
    assert [m.name for m in reg.active()] == ["local-vllm", "mymodel"]
    assert reg.get("mymodel").model_id == "org/m"
    named = {**env, "HVBENCH_MLLM_MODELS": "mymodel"}
    assert [m.name for m in parse_registry(CONFIG, environ=named, **registry_settings(named)).active()] == ["mymodel"]


def test_unknown_model_names_every_way_to_define_one():
    reg = parse_registry(CONFIG, environ={}, source="/somewhere/models.toml")
    with pytest.raises(ModelNotConfigured) as err:
        reg.get("my_vlm")
    msg = str(err.value)
    for needle in ("/somewhere/models.toml", "HVBENCH_MODELS_FILE", "--models-file", "[models.my_vlm]",
                   "HVBENCH_MLLM_MY_VLM_BASE_URL", "HVBENCH_MLLM_MY_VLM_MODEL", "HVBENCH_MLLM_MY_VLM_API_KEY_ENV",
                   "side by side", "HVBENCH_MLLM_MODELS=a,b", "cloud, local-vllm"):
        assert needle in msg, needle
