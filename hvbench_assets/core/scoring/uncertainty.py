"""The report's uncertainty sections: clustered intervals per model group, paired comparisons between groups,
accuracy over option orders, demographic slices and the text-bias baseline, computed from the report's rows and
rendered as tables (core/scoring/report.py calls `compute` and `sections`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from hvbench_assets.core.scoring.stats import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    OVERALL,
    Interval,
    PairedDifference,
    SliceScore,
    Spread,
    accuracy_intervals,
    option_order_spread,
    paired_difference,
    slice_scores,
)
from hvbench_assets.core.scoring.textbias import TextBias

SLICE_ATTRIBUTES = ("L3 gender", "L3 age class", "L10 voice class")
DEFAULT_SLICE_MIN_ITEMS = 30


@dataclass(frozen=True)
class StatsSettings:
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL
    slice_min_items: int = DEFAULT_SLICE_MIN_ITEMS


@dataclass
class Uncertainty:
    settings: StatsSettings
    clustering: str  # how items were grouped into clusters (said in the report)
    n_clusters: int
    intervals: dict[str, dict[str, Interval]] = field(default_factory=dict)  # group -> task|overall -> interval
    naive: dict[str, dict[str, Interval]] = field(default_factory=dict)  # the same, every item its own cluster
    paired: list[PairedDifference] = field(default_factory=list)
    orders: dict[str, dict[str, Spread]] = field(default_factory=dict)  # run label -> task|overall -> spread
    slices: dict[str, list[SliceScore]] = field(default_factory=dict)  # group -> slices
    text_bias: TextBias | None = None


def _item_rows(rows: Sequence[Mapping], info: Mapping[tuple[str, str], Mapping]) -> list[dict]:
    """One row per item: mean correctness over the rows (several seeds of one group), its cluster and slices."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        acc[(r["task"], str(r["question_id"]))].append(float(bool(r["correct"])))
    out = []
    for (task, qid), vals in acc.items():
        extra = info.get((task, qid), {})
        out.append({"task": task, "question_id": qid, "correct": sum(vals) / len(vals),
                    "cluster": extra.get("cluster") or f"{task}/{qid}",
                    **{a: extra.get(a) for a in SLICE_ATTRIBUTES}})
    return out


def compute(plain: Sequence[Mapping], answered: Sequence[Mapping], groups: Mapping[str, Sequence[str]],
            run_labels: Mapping[str, str], info: Mapping[tuple[str, str], Mapping], clustering: str,
            settings: StatsSettings, text_bias: TextBias | None = None) -> Uncertainty:
    """`plain`: answered rows at rotation 0; `answered`: every answered row; `groups`: group label -> its run ids;
    `run_labels`: run id -> label; `info`: (task, question_id) -> cluster and slice values."""
    s = settings
    per_group = {g: _item_rows([r for r in plain if r["run_id"] in set(ids)], info) for g, ids in groups.items()}
    per_group = {g: rows for g, rows in per_group.items() if rows}
    clusters = {r["cluster"] for rows in per_group.values() for r in rows}
    out = Uncertainty(s, clustering, len(clusters), text_bias=text_bias)
    for g, rows in per_group.items():
        out.intervals[g] = accuracy_intervals(rows, s.n_boot, s.seed, s.level)
        out.naive[g] = accuracy_intervals([{**r, "cluster": f"{r['task']}/{r['question_id']}"} for r in rows],
                                          s.n_boot, s.seed, s.level)
        if any(r.get(a) is not None for r in rows for a in SLICE_ATTRIBUTES):
            out.slices[g] = slice_scores(rows, SLICE_ATTRIBUTES, s.slice_min_items, s.n_boot, s.seed, s.level)
    for a, b in combinations(per_group, 2):
        out.paired += paired_difference(per_group[a], per_group[b], a, b, s.n_boot, s.seed, s.level)
    for run_id, label in run_labels.items():
        mine = [r for r in answered if r["run_id"] == run_id]
        if any(int(r["rotation"]) > 0 for r in mine):
            spread = option_order_spread(mine)
            if spread:
                out.orders[label] = spread
    return out


# -- tables ------------------------------------------------------------------------------------
def _ci(iv: Interval | None) -> str:
    if iv is None or iv.estimate is None:
        return "-"
    if iv.low is None:
        return f"{100 * iv.estimate:.1f}"
    return f"{100 * iv.estimate:.1f} [{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def interval_table(u: Uncertainty, tasks: Sequence[str], abbrev) -> tuple[list[str], list[list[str]]]:
    headers = ["Model", "Overall (clustered)", "Overall (items independent)"] + [abbrev(t) for t in tasks]
    rows = [[g, _ci(iv.get(OVERALL)), _ci(u.naive[g].get(OVERALL))] + [_ci(iv.get(t)) for t in tasks]
            for g, iv in u.intervals.items()]
    return headers, rows


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else "<0.001"


def paired_table(u: Uncertainty, tasks: Sequence[str], abbrev) -> tuple[list[str], list[list[str]]]:
    by_pair: dict[tuple[str, str], dict[str, PairedDifference]] = defaultdict(dict)
    for d in u.paired:
        by_pair[(d.model_a, d.model_b)][d.task] = d

    def cell(d: PairedDifference | None) -> str:
        if d is None:
            return "-"
        return f"{100 * d.difference:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}] p={_p(d.p_value)}"

    headers = ["A", "B", "items (clips)", "Overall A − B"] + [abbrev(t) for t in tasks]
    rows = [[a, b, f"{per[OVERALL].n_items} ({per[OVERALL].n_clusters})", cell(per.get(OVERALL))]
            + [cell(per.get(t)) for t in tasks] for (a, b), per in by_pair.items()]
    return headers, rows


def order_table(u: Uncertainty, tasks: Sequence[str], abbrev) -> tuple[list[str], list[list[str]]]:
    def cell(s: Spread | None) -> str:
        return "-" if s is None else f"{100 * s.mean:.1f} ± {100 * s.std:.1f} (n={s.n_orders})"

    headers = ["Model (option orders)", "Overall"] + [abbrev(t) for t in tasks]
    return headers, [[label, cell(sp.get(OVERALL))] + [cell(sp.get(t)) for t in tasks] for label, sp in u.orders.items()]


def slice_table(u: Uncertainty) -> tuple[list[str], list[list[str]]]:
    rows = []
    for g, scores in u.slices.items():
        for s in scores:
            acc = (f"too few items (< {u.settings.slice_min_items})" if s.accuracy is None else
                   _ci(Interval(s.accuracy, s.low, s.high, s.n_items, s.n_clusters)))
            rows.append([g, s.attribute, s.value, str(s.n_items), str(s.n_clusters), acc])
    return ["Model", "Target label", "Value", "items", "clips", "accuracy % [95% CI]"], rows


def text_bias_table(u: Uncertainty, tasks: Sequence[str], abbrev) -> tuple[list[str], list[list[str]]]:
    tb = u.text_bias
    rows = []
    for t in tasks:
        b = tb.tasks.get(t) if tb else None
        if b is None:
            continue
        if b.accuracy is None:
            rows.append([abbrev(t), str(b.n_items), "-", f"{100 * b.chance:.1f}", "-", "-", b.note])
            continue
        rows.append([abbrev(t), str(b.n_items), f"{100 * b.accuracy:.1f}", f"{100 * b.chance:.1f}",
                     f"{100 * b.above_chance:+.1f}", _p(b.p_value), "yes" if b.predictable else "no"])
    return ["Task", "items", "text-only accuracy %", "chance %", "above chance %", "p (binomial)",
            "predictable"], rows


NOTES = (
    "Intervals are 95 % percentile intervals of a bootstrap that draws whole clips with replacement (questions on "
    "one clip move together) and recomputes each task's accuracy and the mean of the task accuracies; the column "
    "'items independent' draws single items instead and is shown for comparison (narrower when a clip's questions "
    "are answered alike). A group of seeded runs counts each item as its mean correctness over the seeds."
)
PAIRED_NOTES = (
    "Paired bootstrap on the items both models answered: the same drawn clips score both, the interval is that of "
    "A − B in percentage points and p is two-sided (twice the smaller share of resampled differences on either "
    "side of 0)."
)
ORDER_NOTES = (
    "Each rotation of the options (circular runs) is a full pass with another option order: accuracy per rotation, "
    "mean ± standard deviation over the orders, the repeated-runs figure of the reference evaluation with option "
    "order as the varied seed."
)
TEXT_BIAS_NOTES = (
    "No model call: a per-option logistic regression on the question and option texts (length, position, word "
    "overlap, TF-IDF), trained on other clips' items of the same task (clip-grouped k-fold), picks the option it "
    "scores highest. 'above chance' = (accuracy − chance) / (1 − chance); p is a one-sided binomial test against "
    "chance; predictable = p below {alpha}."
)


def sections(u: Uncertainty | None, tasks: Sequence[str], abbrev) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, note, headers, rows) of every section with content, in report order."""
    if u is None:
        return []
    out = [(f"Confidence intervals (%): {u.settings.n_boot} resamples, seed {u.settings.seed}, {u.n_clusters} "
             f"clusters ({u.clustering})",
            NOTES, *interval_table(u, tasks, abbrev))]
    if u.paired:
        out.append(("Paired comparison (percentage points)", PAIRED_NOTES, *paired_table(u, tasks, abbrev)))
    if u.orders:
        out.append(("Accuracy over option orders (%)", ORDER_NOTES, *order_table(u, tasks, abbrev)))
    if u.slices:
        out.append(("Accuracy by target person (demographic slices)",
                    f"Items whose target person has the label (L3 from the face, L10 from the voice of the clip); "
                    f"slices under {u.settings.slice_min_items} items show their count only.", *slice_table(u)))
    if u.text_bias is not None and u.text_bias.tasks:
        out.append(("Text bias: answer predicted from the texts alone",
                    TEXT_BIAS_NOTES.format(alpha=u.text_bias.alpha), *text_bias_table(u, tasks, abbrev)))
    return out
