"""The README and docs/ name only settings, commands, files and links that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = [*(ROOT / "hvbench_assets").rglob("*.py"), *(ROOT / "hvbench_assets_tests").rglob("*.py"), *(ROOT / "scripts").glob("*"), *(ROOT / "benchmarks").glob("*.py"),
           *(ROOT / "deploy").rglob("*.yaml"), ROOT / "dagster_home" / "dagster.yaml", ROOT / ".ci" / "run"]


def _source_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in SOURCES if p.is_file())


def _doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.fixture(scope="module")
def source_text() -> str:
    return _source_text()


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_documented_setting_is_in_the_settings_table(doc):
    """`HVBENCH_X` must be a row of hvbench_assets/settings_table.py; a per-model `HVBENCH_MLLM_<NAME>_...`
    stands for its templated row."""
    from hvbench_assets.settings_table import SETTINGS

    table = {s.name for s in SETTINGS}
    templated = tuple(s.name.split("<", 1)[0] for s in SETTINGS if "<" in s.name)  # HVBENCH_MLLM_
    names = set(re.findall(r"\bHVBENCH_[A-Z0-9_]*", doc.read_text()))
    missing = sorted(n for n in names if n not in table and not n.startswith(templated) and n != "HVBENCH_")
    assert not missing, f"{_doc_id(doc)} documents settings the settings table does not have: {missing}"


def test_the_configuration_reference_is_the_settings_table():
    """docs/configuration.md and .env.example are generated from the settings table (UPDATE_SNAPSHOTS=1 rewrites
    them)."""
    import os

    from hvbench_assets.settings_table import DOCS_FILE, ENV_EXAMPLE, docs_section, docs_table, env_example, write_docs

    if os.environ.get("UPDATE_SNAPSHOTS"):
        write_docs()
    fix = "run UPDATE_SNAPSHOTS=1 pytest hvbench_assets_tests/test_docs.py"
    assert docs_section(DOCS_FILE.read_text()) == docs_table(), (
        f"docs/configuration.md's settings table differs from hvbench_assets/settings_table.py: {fix}")
    assert ENV_EXAMPLE.read_text() == env_example(), f".env.example differs from the settings table: {fix}"


def test_every_setting_of_the_table_is_read_somewhere(source_text):
    """A row nobody reads is a documented setting that does nothing."""
    from hvbench_assets.settings_table import SETTINGS

    table_file = ROOT / "hvbench_assets" / "settings_table.py"
    others = "\n".join(p.read_text(errors="replace") for p in SOURCES
                       if p.is_file() and p != table_file and "hvbench_assets_tests" not in p.parts)
    tests = "\n".join(p.read_text(errors="replace") for p in SOURCES if p.is_file() and "hvbench_assets_tests" in p.parts)
    unread = [s.name for s in SETTINGS if "<" not in s.name and s.name not in (tests if s.group == "tests" else others)]
    assert not unread, f"settings in the table that no code reads: {unread}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_documented_command_exists(doc):
    from hvbench_assets.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands = set(sub.choices)
    used = set(re.findall(r"(?:bin/|`)hvbench ([a-z][a-z-]+)", doc.read_text()))
    unknown = sorted(u for u in used if u not in commands)
    assert not unknown, f"{_doc_id(doc)} names hvbench commands that do not exist: {unknown}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_documented_file_and_link_exists(doc):
    text = doc.read_text()
    links = re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text)
    paths = re.findall(r"`((?:benchmarks|scripts|docs)/[A-Za-z0-9_./-]+\.(?:py|sh|md))`", text)
    # package files, also as a shorthand from a package root: `core/media/crops.py`, `defs/test_executor.py`
    code = re.findall(r"(?<![\w/.-])((?:hvbench_assets(?:_tests)?/[\w./-]*|(?:core|defs|review|cli|demo|scale)/[\w./-]*)"
                      r"\w\.(?:py|md|toml|json))", text)
    base = doc.parent
    missing = sorted({p for p in links if not (base / p).exists()} | {p for p in paths if not (ROOT / p).exists()}
                     | {p for p in code if not any((ROOT / d / p).exists() for d in ("", "hvbench_assets", "hvbench_assets_tests"))})
    assert not missing, f"{_doc_id(doc)} points at files that do not exist: {missing}"


def test_readme_is_the_door_not_the_house():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move detail into docs/"
    for doc in DOCS[1:]:
        assert f"docs/{doc.name}" in (ROOT / "README.md").read_text(), f"README.md does not link {doc.name}"


# a measured ratio: 1.28x, 0.75×, 2–6× (a size such as 320x240 is not one: a digit follows its x)
_RATIO = re.compile(r"\d(?:[.,]\d+)?\s?(?:×|x\b)")


def test_readme_holds_no_measured_ratios():
    """Speed and accuracy figures have one home each (docs/performance.md for speed, each label's page for its
    accuracy); the README links them instead of copying them."""
    found = [f"README.md:{n}: {m.group(0)!r} in {line.strip()[:80]!r}"
             for n, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1) for m in _RATIO.finditer(line)]
    assert not found, "move these figures into the docs page that owns them and link it:\n" + "\n".join(found)
    assert [m.group(0) for m in _RATIO.finditer("took 1.28x, then 0.75×, 2–6× of it; 320x240 frames")] == \
        ["1.28x", "0.75×", "6×"]
