"""Accuracy the way the paper tables it: per task, category average = mean of the category's task
accuracies, overall = mean of the 16 task accuracies (not of items), plus random-guess baselines."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import fmean

from hvbench_assets.core.tasks.catalog import TASKS, task_info, tasks_of

from hvbench_assets.core.tasks.family import CATEGORIES

VISION_CATEGORIES = CATEGORIES[:3]  # the paper's "12 tasks" column: all but speech-visual alignment


@dataclass(frozen=True)
class Summary:
    tasks: dict[str, float]  # task name -> accuracy (only tasks with a value)
    categories: dict[str, float | None]  # category -> mean of its present tasks; None when none present
    category_coverage: dict[str, int]  # category -> how many of its 4 tasks had a value
    vision_avg: float | None  # mean of the 12 vision-only task accuracies (Table 1's "12 tasks")
    overall: float | None  # mean of the present tasks among the 16
    n_tasks: int
    extra_tasks: dict[str, float]  # tasks outside the 16 (reported, never averaged in)

    @property
    def complete(self) -> bool:
        return self.n_tasks == len(TASKS)


def canonical_task(name: str) -> str:
    info = task_info(name)
    return info.name if info else name


def aggregate(task_acc: Mapping[str, float | None]) -> Summary:
    """Per-task accuracies (keys: file stems or acronyms; None/missing = not evaluated) -> summary."""
    acc = {canonical_task(k): float(v) for k, v in task_acc.items() if v is not None}
    known = {t.name for t in TASKS}
    cats: dict[str, float | None] = {}
    cover: dict[str, int] = {}
    for cat in CATEGORIES:
        vals = [acc[t.name] for t in tasks_of(cat) if t.name in acc]
        cats[cat] = fmean(vals) if vals else None
        cover[cat] = len(vals)
    vision = [acc[t.name] for t in TASKS if t.category in VISION_CATEGORIES and t.name in acc]
    present = [acc[t.name] for t in TASKS if t.name in acc]
    return Summary(
        tasks={k: v for k, v in acc.items() if k in known}, categories=cats, category_coverage=cover,
        vision_avg=fmean(vision) if vision else None, overall=fmean(present) if present else None,
        n_tasks=len(present), extra_tasks={k: v for k, v in acc.items() if k not in known},
    )


@dataclass(frozen=True)
class TaskScore:
    task: str
    n_items: int
    n_correct: int
    n_unparsed: int

    @property
    def accuracy(self) -> float:
        return self.n_correct / self.n_items if self.n_items else 0.0

    @property
    def unparsed_rate(self) -> float:
        return self.n_unparsed / self.n_items if self.n_items else 0.0


def task_scores(rows: Iterable[Mapping]) -> dict[str, TaskScore]:
    """Rows with `task`, `correct` (bool) and `status` ('parsed' / 'unparsed' / ...) -> per-task counts.
    Unparsed replies count as wrong."""
    counts: dict[str, list[int]] = {}
    for r in rows:
        c = counts.setdefault(r["task"], [0, 0, 0])
        c[0] += 1
        c[1] += bool(r["correct"])
        c[2] += r.get("status") != "parsed"
    return {t: TaskScore(t, *c) for t, c in counts.items()}


def random_baseline(n_options_by_task: Mapping[str, Iterable[int]]) -> dict[str, dict[str, float]]:
    """Expected accuracy of a uniform guesser per task, two ways:
    `expected` (ours) = mean over items of 1/n_options - exact for mixed option counts;
    `reference` = item count / total option count = 1/mean(n_options), what the reference script does."""
    out = {}
    for task, ns in n_options_by_task.items():
        ns = [int(n) for n in ns]
        if not ns:
            continue
        out[task] = {"expected": fmean(1.0 / n for n in ns), "reference": len(ns) / sum(ns), "n_items": len(ns)}
    return out


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of an accuracy k/n: honest for the small per-task item counts
    (HumanVBench tasks have 100-200 items) where the normal approximation misbehaves near 0 or 1."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
