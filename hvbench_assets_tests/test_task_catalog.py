"""The task catalog (core/tasks/catalog.py) is complete, and it is the only place that describes the 16 tasks."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from hvbench_assets.core.tasks import catalog, prompts as task_prompts
from hvbench_assets.core.tasks.catalog import CATEGORIES, MARKINGS, TASKS
from hvbench_assets.core.tasks.labels import PAPER_LABEL
from hvbench_assets.core.tasks.registry import FAMILIES, FAMILY_BY_ABBREV

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "hvbench_assets" / "core" / "tasks" / "catalog.py"
# What names a task in code: its acronym, its published file stem, its asset key.
TASK_KEYS = {k for t in TASKS for k in (t.abbrev, t.name, t.asset)}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.abbrev)
def test_every_task_has_every_field(task):
    assert task.name and task.abbrev and task.asset and task.category in CATEGORIES
    assert task.labels and set(task.labels + task.ours) <= set(PAPER_LABEL), "a label asset that does not exist"
    assert bool(task.ours) == bool(task.why_ours), "labels beyond Table 9 need a reason, and only they"
    assert task.marking in MARKINGS
    assert task.truth and task.answer_from and len(task.guideline) > 80
    assert set(task.answer_labels) <= set(task.labels + task.ours), "the answer is read from a label the task reads"
    assert task.annotation in (None, "count", "action")
    assert set(task.after) <= {t.asset for t in TASKS} - {task.asset}
    assert task.asks is not None and task.asks.what and task.asks.all_of, "what its question must ask"
    # the code it names exists: select_<abbrev>, build_<abbrev>, the parameter class and every prompt
    fam = FAMILY_BY_ABBREV[task.abbrev]
    assert fam.info is task and fam.select.__name__ == f"select_{task.abbrev.lower()}"
    assert fam.build.__name__ == ("build" if task.descriptive else f"build_{task.abbrev.lower()}")
    assert type(fam.params).__name__ == task.rules.params
    assert all(isinstance(getattr(task_prompts, p, None), type(task_prompts.PERSON_DESCRIPTION))
               for p in task.rules.prompts)
    if task.descriptive:
        syn = task.synthesis
        assert not task.rules.prompts and task.records_steps and task.paper_no_edit is not None
        assert syn.leak_kind in ("emotion", "content") and 0 < syn.length_band[0] < 1 < syn.length_band[1]
    else:
        assert task.paper_no_edit is None


def test_lookups_and_what_the_other_modules_read_come_from_the_catalog():
    assert len(TASKS) == 16 and len(TASK_KEYS) == 48
    assert [f.info for f in FAMILIES] == list(TASKS)
    assert catalog.task_info("hc") is catalog.task_info("Human_Count") is catalog.TASK_BY_ABBREV["HC"]
    assert catalog.NOT_REVIEWED == ("AVAD", "SCM")
    assert catalog.ANNOTATED == {"HC": "count", "AST": "action", "TSA": "action"}
    from hvbench_assets.core.benchmark import tasks as benchmark_tasks
    from hvbench_assets.core.curation import state

    assert benchmark_tasks.TASKS is TASKS and state.DEFAULT_EXCLUDED == catalog.NOT_REVIEWED


def _sources() -> list[Path]:
    """The product, benchmarks/ and scripts/. Not hvbench_assets/testkit/: like the tests it holds test data (scripted
    model replies per task kind), and nothing in the product imports it (test_imports.py)."""
    testkit = ROOT / "hvbench_assets" / "testkit"
    return sorted(p for folder in ("hvbench_assets", "benchmarks", "scripts") for p in (ROOT / folder).rglob("*.py")
                  if p != CATALOG and testkit not in p.parents)


def _task_key(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in TASK_KEYS else None


def test_no_other_module_keeps_a_table_of_the_tasks():
    """A dict keyed by tasks (two or more keys), an entry naming one task two ways (`Info("Human_Count", "HC")`),
    or a string the catalog holds (a guideline, an answer source, a synthesis setting), written anywhere but the
    catalog, is a second description of the tasks."""
    texts = {v for t in TASKS for v in (t.guideline, t.truth, t.answer_from, t.why_ours) if len(v) > 30}
    found = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Dict) and sum(_task_key(k) is not None for k in node.keys) >= 2:
                found.append(f"{where}: a dict keyed by tasks")
            elif isinstance(node, ast.Call) and len({_task_key(a) for a in node.args} - {None}) >= 2:
                found.append(f"{where}: an entry naming a task twice (acronym, file or asset)")
            elif isinstance(node, ast.Constant) and node.value in texts:
                found.append(f"{where}: {node.value[:60]!r}")
    assert not found, "per-task descriptions outside core/tasks/catalog.py:\n" + "\n".join(found)


def test_what_each_familys_evidence_holds_is_documented():
    """The export's per-item evidence (core/benchmark/evidence.py) follows the catalog; docs/evaluation.md holds its
    table (python -m hvbench_assets.core.benchmark.evidence prints it)."""
    from hvbench_assets.core.benchmark.evidence import evidence_table_markdown

    doc = (ROOT / "docs" / "evaluation.md").read_text()
    assert evidence_table_markdown() in doc, "docs/evaluation.md's evidence table differs from the catalog's"
