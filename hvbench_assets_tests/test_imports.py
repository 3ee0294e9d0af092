"""The package's import graph, read with `ast` (nothing is imported): no circles, and no import that points
back up a floor unless ALLOWED_UP names it with its reason.

Floors, lowest first. A module may import its own floor and the floors below it. Inside `core/`, the loose
modules (settings.py, devices.py, ...) are the ground floor and each subpackage sits on one floor:

    core: settings environment package_data processes devices published_weights
          < warehouse media            storage and media files
          < mllm ingest                model clients; inbox and shot splitting
          < vision audio               the per-clip labels
          < speakers render            L7 over faces and voices; question videos over L1 tracks
          < synthesis                  the generic question-writing chain and model replies (no family in it)
          < tasks                      the 16 families (they call the chain with their recipes), the question store
          < benchmark                  pool, leakage, export
          < scoring curation           reports over a benchmark; review states
          < evaluation                 asking models, then the report
    package: core weights < settings_table (the settings, read from the environment) < scale review runtime < defs
             < definitions < demo preload (what the run workers' fork server imports) < cli
             < testkit (media, truth sets and fake servers shared by the tests and benchmarks/; nothing imports it)

Every function-level import counts too: a lazy import is still a dependency.

Outside the package: benchmarks/ and the tests share helpers through hvbench_assets/testkit/, so neither imports
the other, and testkit imports neither the tests nor pytest (a helper that needs pytest stays in the tests).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from hvbench_assets_tests.conftest import parse_python

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hvbench_assets"
TESTS = ROOT / "hvbench_assets_tests"
BENCHMARKS = ROOT / "benchmarks"
TESTKIT = PACKAGE / "testkit"

CORE_FLOORS = [
    {"settings", "environment", "package_data", "processes", "devices", "published_weights"},
    {"warehouse", "media"},
    {"mllm", "ingest"},
    {"vision", "audio"},
    {"speakers", "render"},
    {"synthesis"},
    {"tasks"},
    {"benchmark"},
    {"scoring", "curation"},
    {"evaluation"},
]
PACKAGE_FLOORS = [{"core", "weights"}, {"settings_table"}, {"scale", "review", "runtime"}, {"defs"}, {"definitions"},
                  {"demo", "preload"}, {"cli"}, {"testkit"}]

# (importing module, imported module or package): why this arrow up is right. Keep it short.
ALLOWED_UP = {
    ("core.benchmark.leakage", "core.scoring.extraction"):
        "blind answers are read by the evaluation's own reply rules (a leaf module), so leaked means answerable",
    ("core.benchmark.open_ended", "core.scoring.open_match"):
        "an open item's structured truth is parsed by the matcher that grades it (a leaf module), so they cannot drift",
    ("core.benchmark.explain", "core.evaluation.tables"): "a question's whole chain ends with its evaluations",
    ("core.benchmark.explain", "core.curation.flags"): "an evaluation's flag and its review outcome, by the queue's rule",
}
def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (f, is_package)
    return out


@cache
def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (`from a import b` counts as a.b when b is a module)."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(parse_python(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:
                    if f"{target}.{a.name}" in modules:
                        found.add(f"{target}.{a.name}")
                    elif target in modules:
                        found.add(target)
        found.discard(name)
        graph[name] = found
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def _floor(module: str) -> tuple[int, int] | None:
    """(package floor, core floor) of a module; None for the package's own __init__."""
    parts = module.split(".")[1:]
    if not parts:
        return None
    top = next(i for i, f in enumerate(PACKAGE_FLOORS) if parts[0] in f)
    if parts[0] != "core" or len(parts) == 1:
        return top, -1 if parts[0] == "core" else 0
    return top, next(i for i, f in enumerate(CORE_FLOORS) if parts[1] in f)


def _allowed(src: str, dst: str) -> tuple[str, str] | None:
    src, dst = src.removeprefix("hvbench_assets."), dst.removeprefix("hvbench_assets.")
    return next((k for k in ALLOWED_UP if k[0] == src and (dst == k[1] or dst.startswith(k[1] + "."))),
                None)


def upward_imports(graph: dict[str, set[str]]) -> tuple[list[str], set[tuple[str, str]]]:
    """(arrows up a floor that ALLOWED_UP does not name, the ALLOWED_UP entries in use)."""
    bad, used = [], set()
    for src, targets in sorted(graph.items()):
        here = _floor(src)
        for dst in sorted(targets):
            there = _floor(dst)
            if here is None or there is None or there <= here:
                continue
            if here[0] == there[0] and here[0] != 0:
                continue  # the same package outside core: its modules are one floor
            key = _allowed(src, dst)
            if key:
                used.add(key)
            else:
                bad.append(f"{src} -> {dst}")
    return bad, used


def test_every_module_sits_on_a_floor():
    missing = {m.split(".")[1] for m in _modules() if m.count(".") and not any(m.split(".")[1] in f for f in PACKAGE_FLOORS)}
    missing |= {m.split(".")[2] for m in _modules() if m.startswith("hvbench_assets.core.") and
                not any(m.split(".")[2] in f for f in CORE_FLOORS)}
    assert not missing, f"put these in PACKAGE_FLOORS / CORE_FLOORS of {__file__}: {sorted(missing)}"


def test_no_import_circles():
    found = circles(import_graph())
    assert not found, "import circles (move the shared piece to a lower module):\n" + "\n".join(
        " <-> ".join(group) for group in found)


def test_no_unexplained_import_up_a_floor():
    graph = import_graph()
    bad, used = upward_imports(graph)
    assert not bad, ("imports up a floor (move the shared piece down, or add it to ALLOWED_UP with the reason, "
                     "and say why in the importing module's docstring):\n" + "\n".join(bad))
    stale = sorted(k for k in set(ALLOWED_UP) - used if f"hvbench_assets.{k[0]}" in graph)
    assert not stale, f"ALLOWED_UP entries no import needs any more (delete them): {stale}"


def test_the_reader_sees_function_level_imports_and_circles():
    assert "hvbench_assets.demo.main" in import_graph()["hvbench_assets.cli.demo"]  # imported inside _demo
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a file, function-level ones included (`from a import b`: a.b);
    a test module named in a string (`-m hvbench_assets_tests.x`, code handed to `python -c`) counts too."""
    out = []
    for node in ast.walk(parse_python(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out += [(node.lineno, m) for m in re.findall(r"\bhvbench_assets_tests(?:\.\w+)+", node.value)]
    return out


def _offenders(files, tops: set[str]) -> list[str]:
    return [f"{f.relative_to(ROOT)}:{line}: {name}" for f in files for line, name in _imported_modules(f)
            if name.split(".")[0] in tops]


def test_benchmarks_do_not_import_the_tests():
    found = _offenders(sorted(BENCHMARKS.rglob("*.py")), {"hvbench_assets_tests"})
    assert not found, ("benchmarks/ imports the test package; move the helper into hvbench_assets/testkit/ and "
                       "import it from there:\n" + "\n".join(found))


def test_the_tests_do_not_import_the_benchmarks():
    """Neither `benchmarks.x` nor a script by its name (as `sys.path.insert(0, "benchmarks")` would allow)."""
    scripts = {"benchmarks", *(p.stem for p in BENCHMARKS.glob("*.py"))}
    found = _offenders(sorted(TESTS.rglob("*.py")), scripts)
    assert not found, "tests import a benchmark script (share it through hvbench_assets/testkit/):\n" + "\n".join(found)


def test_the_testkit_imports_neither_the_tests_nor_pytest():
    """Read with `ast` (every import, also inside functions), then imported for real in a fresh interpreter:
    importing every testkit module loads no module of the tests and no pytest."""
    found = _offenders(sorted(TESTKIT.rglob("*.py")), {"hvbench_assets_tests", "pytest", "_pytest"})
    assert not found, ("hvbench_assets/testkit/ is library code: keep what needs pytest or the tests in "
                       "hvbench_assets_tests/:\n" + "\n".join(found))
    modules = sorted(f"hvbench_assets.testkit.{p.stem}" for p in TESTKIT.glob("*.py") if p.stem != "__init__")
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n    importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'hvbench_assets_tests')))")
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout.strip().splitlines()[-1] == "[]", f"importing testkit loaded: {got.stdout.strip()}"


def test_the_checks_see_imports_in_functions_and_strings(tmp_path):
    src = tmp_path / "bench.py"
    src.write_text('def f():\n    from hvbench_assets_tests.face_set import x\n'
                   'CMD = ["python", "-m", "hvbench_assets_tests.scale.cluster_scenario"]\n'
                   '"""see hvbench_assets_tests/face_set.py"""\n')
    assert [n for _, n in _imported_modules(src)] == ["hvbench_assets_tests.face_set.x",
                                                      "hvbench_assets_tests.scale.cluster_scenario"]
