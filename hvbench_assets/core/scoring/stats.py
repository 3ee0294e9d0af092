"""Uncertainty of the accuracies: bootstrap intervals clustered by clip, a paired bootstrap between two models,
the spread over option orders, and accuracy per demographic slice of the target person.

Several questions share a clip, and answers about one clip are correlated (a blurry clip is hard for every
question on it), so resampling items as if independent makes intervals too narrow. Every bootstrap here draws
whole clusters (clips) with replacement and recomputes the headline statistic on the drawn items: a task's
accuracy is right/asked over the drawn items, the overall score the mean of the task accuracies (as the
paper's tables average tasks, not items). Resampling is seeded, so a report is reproducible.

    acc = accuracy_intervals(rows, n_boot=2000, seed=0)   # rows: task, cluster, correct
    cmp = paired_difference(rows_a, rows_b, n_boot=2000, seed=0)
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_N_BOOT = 2000
DEFAULT_SEED = 0
DEFAULT_LEVEL = 0.95
OVERALL = "overall"


@dataclass(frozen=True)
class Interval:
    estimate: float | None
    low: float | None
    high: float | None
    n_items: int
    n_clusters: int


def _weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_clusters) counts: how often each cluster is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters))
    flat = (draws + n_clusters * np.arange(n_boot)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_clusters).reshape(n_boot, n_clusters).astype(float)


def _task_matrices(rows: Sequence[Mapping], clusters: list[str], tasks: list[str], value: str
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(tasks x clusters) sums of `value` and item counts."""
    ci = {c: i for i, c in enumerate(clusters)}
    ti = {t: i for i, t in enumerate(tasks)}
    sums = np.zeros((len(tasks), len(clusters)))
    counts = np.zeros((len(tasks), len(clusters)))
    for r in rows:
        sums[ti[r["task"]], ci[str(r["cluster"])]] += float(r[value])
        counts[ti[r["task"]], ci[str(r["cluster"])]] += 1
    return sums, counts


def _replicates(sums: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per resample: task means (n_boot x tasks, NaN where a task drew no item) and their mean over tasks."""
    num = weights @ sums.T
    den = weights @ counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        per_task = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    with warnings.catch_warnings():  # a resample without any item of any task: NaN, dropped later
        warnings.simplefilter("ignore", RuntimeWarning)
        overall = np.nanmean(per_task, axis=1)
    return per_task, overall


def _percentile(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    values = values[~np.isnan(values)]
    if not len(values):
        return None, None
    a = (1 - level) / 2
    return float(np.quantile(values, a)), float(np.quantile(values, 1 - a))


def accuracy_intervals(rows: Iterable[Mapping], n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED,
                       level: float = DEFAULT_LEVEL, value: str = "correct") -> dict[str, Interval]:
    """Rows with `task`, `cluster` (clip id; the item's own id when unknown) and `correct` -> task -> percentile
    interval of the clustered bootstrap, plus OVERALL for the mean of the task accuracies. Clusters are drawn
    across all tasks at once, so a clip with questions in two tasks moves both."""
    rows = list(rows)
    if not rows:
        return {}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    clusters = sorted({str(r["cluster"]) for r in rows})
    sums, counts = _task_matrices(rows, clusters, tasks, value)
    per_task, overall = _replicates(sums, counts, _weights(len(clusters), n_boot, seed))
    out = {}
    for i, t in enumerate(tasks):
        n = counts[i].sum()
        out[t] = Interval(float(sums[i].sum() / n), *_percentile(per_task[:, i], level), int(n),
                          int((counts[i] > 0).sum()))
    est = float(np.mean([sums[i].sum() / counts[i].sum() for i in range(len(tasks))]))
    out[OVERALL] = Interval(est, *_percentile(overall, level), len(rows), len(clusters))
    return out


@dataclass(frozen=True)
class PairedDifference:
    model_a: str
    model_b: str
    task: str  # a task, or OVERALL (mean of task accuracies)
    n_items: int
    n_clusters: int
    acc_a: float
    acc_b: float
    difference: float  # acc_a - acc_b
    low: float
    high: float
    p_value: float  # two-sided: 2 x the smaller share of resampled differences on either side of 0


def paired_difference(rows_a: Iterable[Mapping], rows_b: Iterable[Mapping], model_a: str = "A", model_b: str = "B",
                      n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL,
                      ) -> list[PairedDifference]:
    """Accuracy of A minus B on the items both answered (rows keyed by task and `question_id`), per task and
    overall. Both models are scored on the same resampled clusters, so what the items share cancels out;
    identical answers give a difference of exactly 0 in every resample and p = 1."""
    a = {(r["task"], str(r["question_id"])): r for r in rows_a}
    b = {(r["task"], str(r["question_id"])): r for r in rows_b}
    common = sorted(set(a) & set(b))
    if not common:
        return []
    rows = [{"task": k[0], "cluster": a[k]["cluster"], "a": float(bool(a[k]["correct"])),
             "b": float(bool(b[k]["correct"])), "d": float(bool(a[k]["correct"])) - float(bool(b[k]["correct"]))}
            for k in common]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    clusters = sorted({str(r["cluster"]) for r in rows})
    w = _weights(len(clusters), n_boot, seed)
    sa, counts = _task_matrices(rows, clusters, tasks, "a")
    sb, _ = _task_matrices(rows, clusters, tasks, "b")
    ta, oa = _replicates(sa, counts, w)
    tb, ob = _replicates(sb, counts, w)
    out = []
    for i, t in enumerate([*tasks, OVERALL]):
        if t == OVERALL:
            diffs = oa - ob
            acc_a = float(np.mean(sa.sum(1) / counts.sum(1)))
            acc_b = float(np.mean(sb.sum(1) / counts.sum(1)))
            n, nc = len(rows), len(clusters)
        else:
            diffs = ta[:, i] - tb[:, i]
            acc_a, acc_b = float(sa[i].sum() / counts[i].sum()), float(sb[i].sum() / counts[i].sum())
            n, nc = int(counts[i].sum()), int((counts[i] > 0).sum())
        diffs = diffs[~np.isnan(diffs)]
        lo, hi = _percentile(diffs, level)
        out.append(PairedDifference(model_a, model_b, t, n, nc, acc_a, acc_b, acc_a - acc_b, lo, hi,
                                    _two_sided_p(diffs)))
    return out


def _two_sided_p(diffs: np.ndarray) -> float:
    """Share of resampled differences at or beyond 0 on the side opposite the estimate, doubled; the +1 keeps a
    finite bootstrap from claiming p = 0."""
    b = len(diffs)
    if not b:
        return 1.0
    below = (np.sum(diffs <= 0) + 1) / (b + 1)
    above = (np.sum(diffs >= 0) + 1) / (b + 1)
    return float(min(1.0, 2 * min(below, above)))


@dataclass(frozen=True)
class Spread:
    mean: float
    std: float  # population standard deviation over the orders, as the seeds table reports
    n_orders: int
    values: tuple[float, ...]


def option_order_spread(rows: Iterable[Mapping]) -> dict[str, Spread]:
    """Rows of one run with `task`, `rotation`, `correct`: every rotation is a complete pass over the items with
    the options in another order, so its accuracy is one repeated run. Task -> mean ± std over the rotations
    (only rotations answered for every item of the task count), plus OVERALL over the per-rotation task means."""
    by: dict[str, dict[int, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        by[r["task"]][int(r["rotation"])][str(r["question_id"])] = bool(r["correct"])
    out: dict[str, Spread] = {}
    per_rotation: dict[int, list[float]] = defaultdict(list)
    for task, rots in by.items():
        items = set.union(*(set(v) for v in rots.values()))
        full = sorted(k for k, v in rots.items() if set(v) == items)
        if len(full) < 2:
            continue
        vals = [float(np.mean(list(rots[k].values()))) for k in full]
        out[task] = Spread(float(np.mean(vals)), float(np.std(vals)), len(vals), tuple(vals))
        for k, v in zip(full, vals):
            per_rotation[k].append(v)
    n_tasks = len(out)
    overall = [float(np.mean(v)) for v in per_rotation.values() if len(v) == n_tasks]
    if len(overall) >= 2:
        out[OVERALL] = Spread(float(np.mean(overall)), float(np.std(overall)), len(overall), tuple(overall))
    return out


@dataclass(frozen=True)
class SliceScore:
    attribute: str  # e.g. "L3 gender"
    value: str
    n_items: int
    n_clusters: int
    accuracy: float | None  # None when below the minimum item count
    low: float | None
    high: float | None


def slice_scores(rows: Iterable[Mapping], attributes: Sequence[str], min_items: int,
                 n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL,
                 ) -> list[SliceScore]:
    """Rows with `cluster`, `correct` and a value per attribute (None = unknown, left out): accuracy over the
    items of each slice with its clustered interval. The item mean, not a mean of tasks: a slice rarely covers
    every task. Slices under `min_items` are listed with their count only."""
    rows = list(rows)
    out = []
    for attr in attributes:
        values = sorted({str(r[attr]) for r in rows if r.get(attr) is not None})
        for v in values:
            mine = [{"task": "all", "cluster": r["cluster"], "correct": r["correct"]} for r in rows
                    if r.get(attr) is not None and str(r[attr]) == v]
            n_clusters = len({str(r["cluster"]) for r in mine})
            if len(mine) < min_items:
                out.append(SliceScore(attr, v, len(mine), n_clusters, None, None, None))
                continue
            iv = accuracy_intervals(mine, n_boot=n_boot, seed=seed, level=level)["all"]
            out.append(SliceScore(attr, v, len(mine), n_clusters, iv.estimate, iv.low, iv.high))
    return out
