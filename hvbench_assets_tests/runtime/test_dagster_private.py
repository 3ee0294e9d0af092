"""Private Dagster names live in one file (runtime/dagster_private.py), each resolving in the pinned Dagster and
each with its reason; the package, its testkit and benchmarks/ reach Dagster's internals only through it. (The
tests drive Dagster's daemons through its own test utilities and are not counted.)"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.runtime import dagster_private
from hvbench_assets_tests.conftest import parse_python

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "hvbench_assets" / "runtime" / "dagster_private.py"


def _private_references(path: Path) -> list[str]:
    """`dagster._…` imports and string literals naming a `dagster._…` module, as `file:line text`."""
    out = []
    for node in ast.walk(parse_python(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("dagster._"):
            names = [node.value]
        out += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.startswith("dagster._")]
    return out


def test_every_private_name_resolves_and_says_why():
    assert dg.__version__ == dagster_private.DAGSTER_CHECKED, (
        f"Dagster {dg.__version__} is installed, the private names were checked with {dagster_private.DAGSTER_CHECKED}:"
        " check each entry of runtime/dagster_private.py, then update DAGSTER_CHECKED")
    for name, (module, attr, why) in dagster_private.PRIVATE.items():
        assert why.strip(), f"{name} has no reason"
        assert getattr(dagster_private, name) is not None, f"{module}.{attr} ({why})"
    for module, why in dagster_private.PRIVATE_MODULES.items():
        assert importlib.util.find_spec(module) is not None, f"Dagster has no module {module} any more ({why})"


def test_a_name_that_moved_fails_naming_it_and_its_purpose(monkeypatch):
    monkeypatch.setitem(dagster_private.PRIVATE, "Gone", ("dagster._core.events", "NoSuchThing", "an example"))
    with pytest.raises(ImportError, match=r"dagster\._core\.events\.NoSuchThing .*used for: an example"):
        dagster_private.Gone  # noqa: B018
    with pytest.raises(AttributeError, match="add it to PRIVATE"):
        dagster_private.Unlisted  # noqa: B018


def test_nothing_else_reaches_into_dagster():
    files = [p for folder in ("hvbench_assets", "benchmarks") for p in (ROOT / folder).rglob("*.py") if p != ADAPTER]
    found = [ref for p in files for ref in _private_references(p)]
    assert not found, "private Dagster names outside runtime/dagster_private.py:\n" + "\n".join(found)
