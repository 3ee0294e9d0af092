"""One settings table: core reads no environment, nothing else reads an HVBENCH_* variable by itself, and the
resources, `hvbench status` and the typed values all come from the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hvbench_assets import settings_table
from hvbench_assets.settings_table import SETTINGS

PACKAGE = Path(__file__).resolve().parents[1] / "hvbench_assets"
_ENV_READ = re.compile(r"\bos\.environ\b|\bgetenv\s*\(|\bfrom os import[^\n]*\benviron\b")
# a variable of the table read by name anywhere but the table: environ.get("HVBENCH_X"), environ["HF_HUB_OFFLINE"]
_NAMED_READ = re.compile(r"""(?:environ(?:\.get)?\s*[(\[]|getenv\s*\()\s*["'](HVBENCH_\w+|HF_HUB_OFFLINE|"""
                         r"""MODELSCOPE_CACHE|DEEPFACE_HOME)""")


def _modules(root: Path):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_core_reads_no_environment():
    offenders = [f"{p.relative_to(PACKAGE)}:{n}" for p in _modules(PACKAGE / "core")
                 for n, line in enumerate(p.read_text().splitlines(), 1) if _ENV_READ.search(line)]
    assert not offenders, f"core/ must receive values, not read the environment: {offenders}"


def test_only_the_settings_table_reads_its_variables_by_name():
    table = PACKAGE / "settings_table.py"
    offenders = [f"{p.relative_to(PACKAGE)}:{n}" for p in _modules(PACKAGE) if p != table
                 for n, line in enumerate(p.read_text().splitlines(), 1) if _NAMED_READ.search(line)]
    assert not offenders, f"read these through hvbench_assets/settings_table.py: {offenders}"


def test_names_are_unique_and_typed_values_follow_the_default(monkeypatch):
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    monkeypatch.setenv("HVBENCH_EVAL_FRAMES", " 4 ")
    monkeypatch.setenv("HVBENCH_POOL_STRICT_RATIO", "on")
    monkeypatch.setenv("HVBENCH_LEAKAGE_ALPHA", "0.01")
    monkeypatch.setenv("HVBENCH_EVAL_JUDGE", "")  # set but empty: the default
    assert settings_table.value("HVBENCH_EVAL_FRAMES") == 4
    assert settings_table.value("HVBENCH_POOL_STRICT_RATIO") is True
    assert settings_table.value("HVBENCH_LEAKAGE_ALPHA") == 0.01
    assert settings_table.value("HVBENCH_EVAL_JUDGE") == ""
    assert settings_table.value("HVBENCH_EVAL_FPS") == 0.0  # unset: the default
    monkeypatch.setenv("HVBENCH_EVAL_MAX_SIDE", "big")
    with pytest.raises(ValueError, match="HVBENCH_EVAL_MAX_SIDE='big' is not a whole number"):
        settings_table.value("HVBENCH_EVAL_MAX_SIDE")
    with pytest.raises(KeyError, match="not in the settings table"):
        settings_table.value("HVBENCH_NO_SUCH_THING")


def test_every_resource_takes_its_setting_fields_from_the_table(monkeypatch):
    from hvbench_assets.defs.resources import RESOURCE_CLASSES, build_resources

    backed = {info.json_schema_extra["setting"]: (key, field)
              for key, cls in RESOURCE_CLASSES.items() for field, info in cls.model_fields.items()
              if isinstance(info.json_schema_extra, dict) and "setting" in info.json_schema_extra}
    for name, (key, field) in backed.items():  # unset: the table's default
        assert RESOURCE_CLASSES[key].model_fields[field].default == settings_table.default(name), name
    monkeypatch.setenv("HVBENCH_MIN_MOTION", "2.5")  # float: read here
    monkeypatch.setenv("HVBENCH_EVAL_FRAMES", "4")  # int: an EnvVar Dagster resolves
    monkeypatch.setenv("HVBENCH_EVAL_CIRCULAR", "yes")  # bool: read here
    monkeypatch.setenv("HVBENCH_FACE_DETECTOR", "hog")  # str: an EnvVar
    resources = {k: r.process_config_and_initialize() for k, r in build_resources().items()}
    assert resources["settings"].min_motion == 2.5 and resources["settings"].clip_filter().min_motion == 2.5
    assert resources["evaluation"].n_frames == 4 and resources["evaluation"].circular is True
    assert resources["vision"].face_detector == "hog"
    assert resources["benchmark"].name == "hvbench"  # unset


def test_status_lists_every_setting_with_its_current_value(monkeypatch):
    monkeypatch.setenv("HVBENCH_BENCHMARK_NAME", "mine")
    monkeypatch.setenv("HVBENCH_MLLM_QWEN_BASE_URL", "http://gpu-box:8000/v1")
    lines = settings_table.status_lines()
    text = "\n".join(lines)
    assert "* HVBENCH_BENCHMARK_NAME = mine" in text
    assert "  HVBENCH_EVAL_FRAMES = 8" in text  # unset: its default
    assert "* HVBENCH_MLLM_QWEN_BASE_URL = http://gpu-box:8000/v1" in text
    for s in SETTINGS:
        assert "<" in s.name or f" {s.name} = " in text, s.name


def test_the_data_root_of_core_follows_the_setting(monkeypatch, tmp_path):
    from hvbench_assets.core.media.paths import data_root, to_stored

    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path))
    assert data_root() == tmp_path and to_stored(tmp_path / "clips" / "a.mp4") == "clips/a.mp4"


def test_hvbench_status_prints_the_settings_even_without_a_warehouse(monkeypatch, tmp_path, capsys):
    from hvbench_assets.cli import main

    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("HVBENCH_WAREHOUSE", raising=False)
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "no warehouse at" in out and f"* HVBENCH_DATA_DIR = {tmp_path}" in out
    assert "  HVBENCH_BENCHMARK_NAME = hvbench" in out
    assert f"  HVBENCH_WAREHOUSE = {tmp_path / 'hvbench.duckdb'}" in out  # the default follows the data root


def test_hvbench_status_says_which_instance_class_the_dagster_home_uses(monkeypatch, tmp_path, capsys):
    """A DAGSTER_HOME seeded before hvbench's instance class keeps Dagster's: status says so and how to change it."""
    import shutil

    from hvbench_assets.cli import main
    from hvbench_assets.core.settings import PROJECT_ROOT

    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("HVBENCH_WAREHOUSE", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    seen = {}
    for case, text in (("none", None), ("old", "telemetry:\n  enabled: false\n"), ("broken", "a: [\n"), ("ours", "")):
        if case == "ours":
            shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
        elif text is not None:
            (home / "dagster.yaml").write_text(text)
        assert main(["status"]) == 0
        seen[case] = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("dagster instance:"))
    assert "has no dagster.yaml" in seen["none"]
    assert "Dagster's own instance class; copy the `instance_class` block" in seen["old"]
    assert "unreadable" in seen["broken"] and "dagster.yaml" in seen["broken"]
    assert "hvbench's instance class" in seen["ours"]
