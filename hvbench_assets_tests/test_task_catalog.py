"""One object per task family: each of the 16 is complete and defined in its own module under
core/tasks/families/, the catalog (core/tasks/catalog.py) lists exactly those modules, and no other module keeps
a table of the tasks or branches on a family's name."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.recipe import Recipe
from hvbench_assets.core.tasks import catalog, descriptive
from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.tasks.family import CATEGORIES, MARKINGS, TaskFamily
from hvbench_assets.core.tasks.labels import PAPER_LABEL
from hvbench_assets_tests.conftest import parse_python

ROOT = Path(__file__).resolve().parents[1]
FAMILIES_DIR = ROOT / "hvbench_assets" / "core" / "tasks" / "families"
# What names a task in code: its acronym, its published file stem, its asset key.
TASK_KEYS = {k for t in TASKS for k in (t.abbrev, t.name, t.asset)}


def module_of(family: TaskFamily):
    return inspect.getmodule(family.select)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.abbrev)
def test_every_family_has_every_field(task):
    assert task.name and task.abbrev and task.asset and task.category in CATEGORIES
    assert task.labels and set(task.labels + task.ours) <= set(PAPER_LABEL), "a label asset that does not exist"
    assert bool(task.ours) == bool(task.why_ours), "labels beyond Table 9 need a reason, and only they"
    assert task.marking in MARKINGS
    assert task.truth and task.answer_from and len(task.guideline) > 80
    assert set(task.answer_labels) <= set(task.labels + task.ours), "the answer is read from a label the task reads"
    assert task.annotation is None or (task.annotation.kind in ("count", "action") and callable(task.annotation.agreement))
    assert all(isinstance(f, TaskFamily) and f is not task for f in task.after)
    assert task.asks.what and task.asks.all_of, "what its question must ask"
    assert task.strata is None or (task.strata.weights and callable(task.strata.place))
    assert dataclasses.is_dataclass(task.params) and all(isinstance(p, Prompt) for p in task.prompts)
    if task.descriptive:
        syn = task.synthesis
        assert isinstance(syn, Recipe) and task.build is descriptive.build and not task.model_prompts
        assert task.records_steps and task.paper_no_edit is not None and task.options_check is None
        assert syn.leak_kind in ("emotion", "content") and 0 < syn.length_band[0] < 1 < syn.length_band[1]
    else:
        assert task.paper_no_edit is None and (task.records_steps or not task.question_by_model)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.abbrev)
def test_each_family_is_one_module_named_by_its_asset(task):
    """Its selection rule, its own code and its FAMILY live in core/tasks/families/<asset>.py."""
    module = module_of(task)
    assert Path(module.__file__).parent == FAMILIES_DIR and Path(module.__file__).stem == task.asset
    assert module.FAMILY is task
    assert task.build is descriptive.build or inspect.getmodule(task.build) is module


def test_the_catalog_lists_every_family_module_once():
    modules = sorted(p.stem for p in FAMILIES_DIR.glob("*.py"))
    assert sorted(t.asset for t in TASKS) == modules and len(set(map(id, TASKS))) == len(TASKS)
    assert len([t for t in TASKS if t.from_paper]) == 16 and len(TASK_KEYS) == 3 * len(TASKS)
    assert catalog.task_info("hc") is catalog.task_info("Human_Count") is catalog.TASK_BY_ABBREV["HC"]
    assert catalog.NOT_REVIEWED == ("AVAD", "SCM")
    assert catalog.ANNOTATED == {"HC": "count", "AST": "action", "TSA": "action"}
    from hvbench_assets.core.curation import state

    assert state.DEFAULT_EXCLUDED == catalog.NOT_REVIEWED


def _sources() -> list[Path]:
    """The product, benchmarks/ and scripts/, but the family modules (each is its family's one place). Not
    hvbench_assets/testkit/: like the tests it holds test data (scripted model replies per task kind), and nothing in
    the product imports it (test_imports.py)."""
    testkit = ROOT / "hvbench_assets" / "testkit"
    return sorted(p for folder in ("hvbench_assets", "benchmarks", "scripts") for p in (ROOT / folder).rglob("*.py")
                  if FAMILIES_DIR not in p.parents and testkit not in p.parents)


def _task_key(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in TASK_KEYS else None


def _family_texts() -> set[str]:
    """The descriptions that belong to one family alone (a text several share, in full or in part, such as the
    descriptive families' answer source, lives in the shared module it describes)."""
    texts = {t.abbrev: {v for v in (t.guideline, t.truth, t.answer_from, t.why_ours, t.asks.what,
                                    *(p.user for p in t.prompts)) if len(v) > 30} for t in TASKS}
    return {v for abbrev, own in texts.items() for v in own
            if not any(v in w for other, theirs in texts.items() if other != abbrev for w in theirs)}


def test_no_other_module_keeps_a_table_of_the_tasks():
    """A dict keyed by tasks (two or more keys), an entry naming one task two ways (`Info("Human_Count", "HC")`),
    or a text one family holds (a guideline, an answer source, a prompt), written outside the family modules, is a
    second description of the tasks."""
    texts = _family_texts()
    found = []
    for path in _sources():
        for node in ast.walk(parse_python(path.read_text(), str(path))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Dict) and sum(_task_key(k) is not None for k in node.keys) >= 2:
                found.append(f"{where}: a dict keyed by tasks")
            elif isinstance(node, ast.Call) and len({_task_key(a) for a in node.args} - {None}) >= 2:
                found.append(f"{where}: an entry naming a task twice (acronym, file or asset)")
            elif isinstance(node, ast.Constant) and node.value in texts:
                found.append(f"{where}: {node.value[:60]!r}")
    assert not found, "per-task descriptions outside core/tasks/families/:\n" + "\n".join(found)


def name_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, code) of every comparison with a family's name (`abbrev == "ER"`, `task in ("HC", "TSA")`) and every
    lookup of one by its name (`TASK_BY_ABBREV["BTA"]`): behaviour chosen by name instead of by the family."""
    def named(node: ast.AST) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(_task_key(e) is not None for e in node.elts)
        return _task_key(node) is not None

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(named(n) for n in (node.left, *node.comparators)):
            out.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and named(node.slice):
            out.append((node.lineno, ast.unparse(node)))
    return out


def test_the_branch_finder_finds_branches():
    code = ('if abbrev == "ER": pass\nx = "HC" if t.abbrev != "HC" else 1\nok = abbrev in ("TSA", "AST")\n'
            'f = TASK_BY_ABBREV["BTA"]\nfine = abbrev == other and row["task"] == "x"\n')
    assert sorted(line for line, _ in name_branches(parse_python(code))) == [1, 2, 3, 4]


def test_no_module_branches_on_a_family_name_outside_the_family_modules():
    """What differs per family is a field or a function of its object (its module), read through the family; a
    comparison with its name elsewhere is an if-chain waiting to drift."""
    found = [f"{path.relative_to(ROOT)}:{line}: {code}" for path in _sources()
             for line, code in name_branches(parse_python(path.read_text(), str(path)))]
    assert not found, "behaviour chosen by a family's name (move it into the family's module):\n" + "\n".join(found)


def test_what_each_familys_evidence_holds_is_documented():
    """The export's per-item evidence (core/benchmark/evidence.py) follows the catalog; docs/evaluation.md holds its
    table (python -m hvbench_assets.core.benchmark.evidence prints it)."""
    from hvbench_assets.core.benchmark.evidence import evidence_table_markdown

    doc = (ROOT / "docs" / "evaluation.md").read_text()
    assert evidence_table_markdown() in doc, "docs/evaluation.md's evidence table differs from the catalog's"
