"""The report's chart legends name models as readers know them (the registry entry's model id), the registry key
beside the name only where two entries share one; the registry gives those names, env-only models included."""

from __future__ import annotations

from hvbench_assets.core.mllm.registry import parse_registry
from hvbench_assets.core.scoring.report import build_report, charts, legend_labels
from hvbench_assets_tests.core.scoring.test_items_and_report import rows


def test_legends_show_model_names_and_keys_only_where_names_collide():
    # m1 and m2: one model behind two entries (two endpoints of gpt-4o); m3 its own name; m4 unknown to the registry
    names = {"m1": "gpt-4o", "m2": "gpt-4o", "m3": "Qwen/Qwen2.5-VL-7B-Instruct"}
    data = build_report(rows(), benchmark="bench", model_names=names)
    assert legend_labels(data) == {"m1": "gpt-4o (m1)", "m2": "gpt-4o (m2)", "m3": "Qwen/Qwen2.5-VL-7B-Instruct",
                                   "m4": "m4"}
    categories, tasks = charts(data)[:2]
    for svg in (categories, tasks):  # SVG text stays text: the legend reads the names
        assert ">gpt-4o (m1)<" in svg and ">Qwen/Qwen2.5-VL-7B-Instruct<" in svg and ">m4<" in svg
        assert ">m3<" not in svg


def test_a_sampling_suffix_follows_the_name():
    base = [r for r in rows() if r["model"] == "m1"]
    runs = [{"run_id": "a", "model": "m1", "config": {"n_frames": 4}},
            {"run_id": "b", "model": "m1", "config": {"n_frames": None, "fps": 1.0}}]
    data = build_report([{**r, "run_id": rid} for rid in ("a", "b") for r in base], runs, benchmark="bench",
                        model_names={"m1": "gpt-4o"})
    legends = sorted(legend_labels(data).values())
    assert legends[0].startswith("gpt-4o [1.0fps, ") and legends[1].startswith("gpt-4o [4f, ")


def test_the_registry_names_file_entries_and_env_only_models():
    data = {"models": {"gpt4o": {"model_id": "gpt-4o", "base_url": "https://api.openai.com/v1"},
                       "qwen": {"model_id": "Qwen/Qwen2.5-VL-7B-Instruct"}}}
    env = {"HVBENCH_MLLM_MINE_BASE_URL": "http://gpu:8000/v1",
           "HVBENCH_MLLM_MINE_MODEL": "InternVL3-8B"}
    reg = parse_registry(data, env, active="gpt4o,mine")  # HVBENCH_MLLM_MODELS
    assert reg.display_names() == {"gpt4o": "gpt-4o", "qwen": "Qwen/Qwen2.5-VL-7B-Instruct", "mine": "InternVL3-8B"}
