"""The evaluation report: per-task accuracy, category averages and the 16-task mean per model, random
and human baselines, unparsed rates, circular accuracy, distractor selection and item statistics.
Rendered as Markdown and as self-contained HTML with SVG charts."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from statistics import fmean, pstdev

from hvbench_assets.core.tasks.catalog import TASKS, task_info

from hvbench_assets.core.tasks.family import CATEGORIES
from hvbench_assets.core.curation.flags import (FOR_REVIEW, MISS_CHANCE, NEGATIVE_DISCRIMINATION, WRONG_BY_ALL,
                                                chance_all_miss, text_arm_at_chance)
from hvbench_assets.core.scoring import svg
from hvbench_assets.core.scoring.circular import circular_correct
from hvbench_assets.core.scoring.items import (
    ItemStats,
    distractor_histogram,
    item_statistics,
)
from hvbench_assets.core.scoring.metrics import (
    Summary,
    TaskScore,
    aggregate,
    canonical_task,
    random_baseline,
    task_scores,
    wilson_interval,
)
from hvbench_assets.core.scoring.uncertainty import StatsSettings, Uncertainty, compute
from hvbench_assets.core.scoring.uncertainty import sections as stat_sections


@dataclass
class RunView:
    run_id: str
    label: str  # this run
    model: str
    config: dict
    group: str = ""  # runs that differ only by seed share a group; the accuracy tables show group means
    seed: int | None = None


@dataclass
class ReportData:
    benchmark: str
    runs: list[RunView]
    tasks: list[str]  # tasks present, in the paper's order
    scores: dict[str, dict[str, TaskScore]]  # run label -> task -> counts (rotation 0, answered rows)
    summaries: dict[str, Summary]  # group label -> summary (mean over the group's seeds)
    failed: dict[str, int]
    methods: dict[str, Counter]  # run label -> extraction method counts
    circular: dict[str, dict[str, float]]  # group label -> task -> accuracy under every rotation
    circular_summaries: dict[str, Summary]
    random: dict[str, dict[str, float]]
    random_summary: Summary
    random_reference_summary: Summary
    human: Summary | None
    items: list[ItemStats]
    histogram: dict[str, dict[int, int]]
    load_issues: list[dict] = field(default_factory=list)
    spread: dict[str, dict[str, tuple[float, float, int]]] = field(default_factory=dict)  # group -> task -> (mean, sd, n)
    option_picks: list[dict] = field(default_factory=list)  # per item option: text, is_answer, models choosing it
    letter_counts: dict[str, Counter] = field(default_factory=dict)  # run label (and "answer key") -> letter -> count
    item_max_unparsed: float = 1.0  # item statistics leave out models whose unparsed rate is above this
    excluded: dict[str, float] = field(default_factory=dict)  # model group -> unparsed rate (left out of item stats)
    uncertainty: Uncertainty | None = None  # intervals, paired comparisons, option orders, slices, text bias
    sections: list[tuple[str, str]] = field(default_factory=list)  # (markdown, html) added after, e.g. modality arms
    text_arm: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # item -> text arm (right, asked)
    sent_to_review: dict[str, list[str]] = field(default_factory=dict)  # core/curation/flags.write_flags' outcome
    model_names: dict[str, str] = field(default_factory=dict)  # registry key -> the model's name (its id), for legends


_NOT_ANSWER_SETTINGS = ("seed", "concurrency", "limit", "tasks", "send_audio")


def _label_runs(runs: Sequence[Mapping], response_rows: Sequence[Mapping]) -> list[RunView]:
    """Readable, unique labels. Runs of one model that differ only by seed form a group; a model with
    several groups (other frames, circular, judge) gets the sampling and a short config hash."""
    cfg_by_id = {r["run_id"]: r.get("config") or {} for r in runs}
    model_of = {r["run_id"]: r["model"] for r in response_rows}
    ids = sorted(model_of, key=lambda i: (model_of[i], cfg_by_id.get(i, {}).get("seed") or 0, i))

    def group_key(i: str) -> str:
        cfg = cfg_by_id.get(i) or {"run_id": i}  # without its eval_runs row a run stands alone
        return json.dumps([model_of[i], {k: v for k, v in cfg.items() if k not in _NOT_ANSWER_SETTINGS}],
                          sort_keys=True, default=str)

    keys = {i: group_key(i) for i in ids}
    groups_per_model = Counter(model_of[i] for i in {keys[i]: i for i in ids}.values())
    members = Counter(keys.values())
    out = []
    for i in ids:
        model, cfg = model_of[i], cfg_by_id.get(i, {})
        base = model
        if groups_per_model[model] > 1:
            sampling = f"{cfg.get('n_frames')}f" if cfg.get("n_frames") else f"{cfg.get('fps')}fps"
            base = f"{model} [{sampling}{', circular' if cfg.get('circular') else ''}, {_short(keys[i])}]"
        seed, n = cfg.get("seed"), members[keys[i]]
        label, group = (f"{base} seed {seed}", f"{base} (mean of {n})") if n > 1 else (base, base)
        out.append(RunView(i, label, model, cfg, group=group, seed=seed))
    return out


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def _group_summary(per_run: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, tuple[float, float, int]]]:
    tasks = sorted({t for acc in per_run for t in acc})
    means, spread = {}, {}
    for t in tasks:
        vals = [acc[t] for acc in per_run if t in acc]
        means[t] = fmean(vals)
        spread[t] = (means[t], pstdev(vals) if len(vals) > 1 else 0.0, len(vals))
    return means, spread


DEFAULT_ITEM_MAX_UNPARSED = 0.5


def build_report(response_rows: Iterable[Mapping], runs: Sequence[Mapping] = (), benchmark: str = "",
                 human: Mapping[str, float] | None = None, load_issues: Sequence[Mapping] = (),
                 item_max_unparsed: float = DEFAULT_ITEM_MAX_UNPARSED,
                 item_info: Mapping[tuple[str, str], Mapping] | None = None, clustering: str = "",
                 stats: StatsSettings | None = None, text_bias=None,
                 model_names: Mapping[str, str] | None = None) -> ReportData:
    """`response_rows`: eval_responses rows of one benchmark (any number of runs); `runs`: eval_runs rows
    (labels and configs); `human`: task (name or acronym) -> accuracy as a fraction or a percentage.
    Runs that differ only by seed are averaged per task (as the paper averages its five seeds).
    Item statistics (difficulty, discrimination, distractors, entropy) leave out models whose share of
    unparsed replies is above `item_max_unparsed`: a model that refuses everything says nothing about
    how hard an item is, yet would lower every item's p.
    `item_info`: (task, question_id) -> `cluster` (clip) and slice labels for the intervals (core/scoring/
    uncertainty.py), described by `clustering`; `text_bias`: a core/scoring/textbias.py result for the items;
    `model_names`: registry key -> the model's name, which the charts' legends show (see `legend_labels`)."""
    rows = list(response_rows)
    views = _label_runs(runs, rows)
    answered = [r for r in rows if r["status"] != "failed"]
    plain = [r for r in answered if int(r["rotation"]) == 0]
    tasks = sorted({r["task"] for r in rows}, key=_task_order)
    scores, failed, methods = {}, {}, {}
    circ_runs: dict[str, dict[str, float]] = {}
    for v in views:
        mine = [r for r in plain if r["run_id"] == v.run_id]
        scores[v.label] = task_scores(mine)
        failed[v.label] = sum(1 for r in rows if r["run_id"] == v.run_id and r["status"] == "failed")
        methods[v.label] = Counter(r["method"] for r in mine)
        rotated = [r for r in answered if r["run_id"] == v.run_id]
        if any(int(r["rotation"]) > 0 for r in rotated):
            verdicts = circular_correct({**r, "model": v.label} for r in rotated)
            per_task: dict[str, list[bool]] = defaultdict(list)
            for (_, task, _), ok in verdicts.items():
                per_task[task].append(ok)
            circ_runs[v.label] = {t: fmean(oks) for t, oks in per_task.items()}
    summaries, spread, circ, circ_sum = {}, {}, {}, {}
    for group in dict.fromkeys(v.group for v in views):
        labels = [v.label for v in views if v.group == group]
        means, sp = _group_summary([{t: s.accuracy for t, s in scores[lb].items()} for lb in labels])
        summaries[group] = aggregate(means)
        if len(labels) > 1:
            spread[group] = sp
        if any(lb in circ_runs for lb in labels):
            circ[group] = _group_summary([circ_runs[lb] for lb in labels if lb in circ_runs])[0]
            circ_sum[group] = aggregate(circ[group])
    n_options: dict[str, dict[str, int]] = defaultdict(dict)
    for r in rows:
        n_options[r["task"]][str(r["question_id"])] = int(r["n_options"])
    random = random_baseline({t: list(q.values()) for t, q in n_options.items()})
    # item statistics count each model once: the first seed of every group
    first = {}
    for v in views:
        first.setdefault(v.group, v)
    excluded = {}
    for g, v in first.items():
        mine = [r for r in plain if r["run_id"] == v.run_id]
        rate = sum(r["status"] != "parsed" for r in mine) / len(mine) if mine else 0.0
        if rate > item_max_unparsed:
            excluded[g] = rate
    group_of = {v.run_id: g for g, v in first.items() if g not in excluded}
    stat_rows = [{**r, "model": group_of[r["run_id"]], "letters": r["letters"] if isinstance(r["letters"], list)
                  else json.loads(r["letters"]), "answer": r["answer_original"], "chosen": r["chosen_original"]}
                 for r in plain if r["run_id"] in group_of]
    items = item_statistics(stat_rows)
    letters: dict[str, Counter] = {"answer key": Counter(r["answer"] for r in plain if r["run_id"] == views[0].run_id)} \
        if views else {}
    for v in views:
        letters[v.label] = Counter(r["chosen"] or "unparsed" for r in plain if r["run_id"] == v.run_id)
    groups: dict[str, list[str]] = defaultdict(list)
    for v in views:
        groups[v.group].append(v.run_id)
    uncertainty = compute(plain, answered, groups, {v.run_id: v.label for v in views}, item_info or {},
                          clustering or "every item its own cluster (no clip ids known)", stats or StatsSettings(),
                          text_bias)
    return ReportData(
        uncertainty=uncertainty, option_picks=_option_picks(stat_rows), letter_counts=letters,
        benchmark=benchmark or (rows[0]["benchmark"] if rows else ""), runs=views, tasks=tasks, scores=scores,
        summaries=summaries, failed=failed, methods=methods, circular=circ, circular_summaries=circ_sum,
        random=random, random_summary=aggregate({t: v["expected"] for t, v in random.items()}),
        random_reference_summary=aggregate({t: v["reference"] for t, v in random.items()}),
        human=aggregate(normalize_baseline(human)) if human else None, items=items,
        histogram=distractor_histogram(items), load_issues=list(load_issues), spread=spread,
        item_max_unparsed=item_max_unparsed, excluded=excluded, model_names=dict(model_names or {}),
    )


def _option_picks(stat_rows: Sequence[Mapping]) -> list[dict]:
    """One row per option of every item, in the published order, with the models that chose it."""
    chosen: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    first: dict[tuple[str, str], Mapping] = {}
    for r in stat_rows:
        key = (r["task"], str(r["question_id"]))
        first.setdefault(key, r)
        if r["chosen"]:
            chosen[(*key, r["chosen"])].append(r["model"])
    out = []
    for (task, qid), r in sorted(first.items(), key=lambda kv: (_task_order(kv[0][0]), kv[0][1])):
        texts = r.get("options") or [None] * len(r["letters"])
        if isinstance(texts, str):
            texts = json.loads(texts)
        for letter, text in zip(r["letters"], texts):
            models = sorted(chosen.get((task, qid, letter), []))
            out.append({"task": task, "question_id": qid, "letter": letter, "text": text,
                        "is_answer": letter == r["answer"], "n_models": len(models), "models": models})
    return out


def _task_order(name: str) -> tuple[int, str]:
    names = [t.name for t in TASKS]
    return (names.index(name), name) if name in names else (len(names), name)


def normalize_baseline(values: Mapping[str, float]) -> dict[str, float]:
    """Task names or acronyms -> fractions (a table in percent is detected by any value > 1)."""
    vals = {canonical_task(k): float(v) for k, v in values.items() if v is not None and str(v).strip() not in ("", "-")}
    scale = 100.0 if any(v > 1.0 for v in vals.values()) else 1.0
    return {k: v / scale for k, v in vals.items()}


def load_baseline_file(path: str | Path) -> dict[str, float]:
    """A human baseline: JSON {"ER": 87.6, ...} or CSV rows `task,accuracy`."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return normalize_baseline(json.loads(path.read_text()))
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].startswith("#")]
    if rows and rows[0][0].strip().lower() in ("task", "name"):
        rows = rows[1:]
    return normalize_baseline({r[0].strip(): r[1].strip() for r in rows})


# -- table model -------------------------------------------------------------------------------
@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]

    def markdown(self) -> str:
        out = ["| " + " | ".join(self.headers) + " |", "|" + "|".join("---" for _ in self.headers) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self.rows]
        return "\n".join(out)

    def html(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _abbrev(task: str) -> str:
    info = task_info(task)
    return info.abbrev if info else task


def _columns(data: ReportData) -> list[tuple[str, str | None]]:
    """(header, task or category marker) in the paper's order: each category's tasks then its Avg."""
    cols: list[tuple[str, str | None]] = []
    for cat in CATEGORIES:
        present = [t.name for t in TASKS if t.category == cat and t.name in data.tasks]
        if not present:
            continue
        cols += [(_abbrev(t), t) for t in present]
        short = "".join(w[0] for w in cat.replace("-", " ").split())
        cols.append((f"{short} Avg" + ("" if len(present) == 4 else f" ({len(present)}/4)"), f"cat:{cat}"))
    cols += [(t, t) for t in data.tasks if task_info(t) is None]
    cols.append(("Overall" if len(data.tasks) == len(TASKS) else f"Overall ({len(data.tasks)} tasks)", "overall"))
    return cols


def _row(summary: Summary, cols) -> list[str]:
    """Cells of one model; a mean over fewer tasks than its column holds is marked `(have/of)`, so a
    12-task mean never passes for the 16-task Overall."""
    known = [k for _, k in cols if k and k != "overall" and not k.startswith("cat:") and task_info(k)]
    per_cat = Counter(task_info(k).category for k in known)

    def marked(value: float | None, have: int, of: int) -> str:
        return pct(value) if value is None or have >= of else f"{pct(value)} ({have}/{of})"

    out = []
    for _, key in cols:
        if key == "overall":
            out.append(marked(summary.overall, summary.n_tasks, len(known)))
        elif key.startswith("cat:"):
            cat = key[4:]
            out.append(marked(summary.categories[cat], summary.category_coverage[cat], per_cat[cat]))
        else:
            out.append(pct(summary.tasks.get(key, summary.extra_tasks.get(key))))
    return out


def accuracy_table(data: ReportData) -> Table:
    cols = _columns(data)
    rows = [["Random (mean 1/n)"] + _row(data.random_summary, cols),
            ["Random (ref. script: items/options)"] + _row(data.random_reference_summary, cols)]
    rows += [[label] + _row(s, cols) for label, s in data.summaries.items()]
    if data.human:
        rows.append(["Human"] + _row(data.human, cols))
    return Table(["Model"] + [h for h, _ in cols], rows)


def circular_table(data: ReportData) -> Table | None:
    if not data.circular_summaries:
        return None
    cols = _columns(data)
    return Table(["Model (circular)"] + [h for h, _ in cols],
                 [[label] + _row(s, cols) for label, s in data.circular_summaries.items()])


def spread_table(data: ReportData) -> Table | None:
    """Mean and standard deviation over seeds, for groups evaluated more than once."""
    if not data.spread:
        return None
    return Table(["Model (seeds)"] + [_abbrev(t) for t in data.tasks],
                 [[group] + [f"{100 * sp[t][0]:.1f} ± {100 * sp[t][1]:.1f}" if t in sp else "-" for t in data.tasks]
                  for group, sp in data.spread.items()])


def unparsed_table(data: ReportData) -> Table:
    headers = ["Model", "answered", "failed calls", "unparsed", "unparsed %"] + [_abbrev(t) for t in data.tasks]
    rows = []
    for label, per in data.scores.items():
        n = sum(s.n_items for s in per.values())
        u = sum(s.n_unparsed for s in per.values())
        rows.append([label, str(n), str(data.failed[label]), str(u), pct(u / n if n else None)]
                    + [pct(per[t].unparsed_rate) if t in per else "-" for t in data.tasks])
    return Table(headers, rows)


def letter_table(data: ReportData) -> Table:
    """Share of each letter among the replies (as asked) next to the answer key: a model far above the
    key's share on one letter has a position bias that circular mode would expose."""
    letters = sorted({x for c in data.letter_counts.values() for x in c if x != "unparsed"}) + ["unparsed"]
    rows = []
    for label, c in data.letter_counts.items():
        total = sum(c.values())
        rows.append([label] + [pct(c.get(x, 0) / total if total else None) for x in letters])
    return Table(["Letters (%)"] + letters, rows)


def methods_table(data: ReportData) -> Table:
    methods = sorted({m for c in data.methods.values() for m in c})
    return Table(["Model"] + methods, [[label] + [str(c.get(m, 0)) for m in methods] for label, c in data.methods.items()])


def counts_table(data: ReportData) -> Table:
    rows = []
    for t in data.tasks:
        r = data.random.get(t, {})
        rows.append([_abbrev(t), t, str(int(r.get("n_items", 0))), pct(r.get("expected")), pct(r.get("reference"))]
                    + [_count_with_ci(data.scores[label][t]) if t in data.scores[label] else "-" for label in data.scores])
    return Table(["Task", "File", "Items", "Random mean 1/n", "Random items/options"]
                 + [f"{label} right/answered [95% CI %]" for label in data.scores], rows)


def _count_with_ci(score: TaskScore) -> str:
    lo, hi = wilson_interval(score.n_correct, score.n_items)
    return f"{score.n_correct}/{score.n_items} [{100 * lo:.0f}-{100 * hi:.0f}]"


def distractor_table(data: ReportData) -> Table:
    n_models = len({v.group for v in data.runs}) - len(data.excluded)
    headers = ["Task", "distractors", "chosen by 0 (non-functional)", "chosen by >=1 %"] + \
              [f"x={x}" for x in range(0, n_models + 1)]
    rows = []
    for t in data.tasks:
        h = data.histogram.get(t, {})
        total = sum(h.values())
        rows.append([_abbrev(t), str(total), str(h.get(0, 0)), pct((total - h.get(0, 0)) / total if total else None)]
                    + [str(h.get(x, 0)) for x in range(0, n_models + 1)])
    return Table(headers, rows)


def item_summary_table(data: ReportData) -> Table:
    rows = []
    for t in data.tasks:
        mine = [s for s in data.items if s.task == t]
        disc = [s.discrimination for s in mine if s.discrimination is not None]
        ent = [s.entropy_norm for s in mine if s.entropy_norm is not None]
        rows.append([_abbrev(t), str(len(mine)), f"{fmean(s.difficulty for s in mine):.2f}" if mine else "-",
                     f"{fmean(disc):.2f}" if disc else "-", str(sum(d < 0 for d in disc)),
                     str(sum(s.difficulty == 0 for s in mine)), str(sum(s.difficulty == 1 for s in mine)),
                     f"{fmean(ent):.2f}" if ent else "-",
                     str(sum(len(s.non_functional) for s in mine))])
    return Table(["Task", "items", "mean difficulty (p)", "mean discrimination (r_pb)", "items r<0",
                  "nobody right", "everybody right", "mean option entropy (norm.)", "non-functional distractors"], rows)


FLAGGED_LIMIT = 20
FLAGGED_CSV = "flagged_items.csv"


def flagged_items(data: ReportData) -> list[tuple[ItemStats, str]]:
    """Every flagged item with why, worst first (most negative discrimination, then lowest p)."""
    misses = MissChance(data)
    out = []
    for s in data.items:
        why = [w for w, hit in (("nobody right", s.difficulty == 0),
                                (NEGATIVE_DISCRIMINATION, s.discrimination is not None and s.discrimination < 0),
                                (WRONG_BY_ALL, _wrong_by_all(data, s, misses)),
                                ("non-functional distractors", bool(s.non_functional)),
                                ("answer predictable from text", _text_predicted(data, s))) if hit]
        if why:
            out.append((s, "; ".join(why)))
    out.sort(key=lambda p: (p[0].discrimination if p[0].discrimination is not None else 0.0, p[0].difficulty))
    return out


class MissChance:
    """Per item: how likely its models all miss it by luck (core/curation/flags.chance_all_miss), from each model's
    picks on the other items (the first seed of each group, as the item statistics count them)."""

    def __init__(self, data: ReportData):
        self.picked: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)  # item -> model -> right
        self.task: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # (model, task) -> right, asked
        self.all: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for p in data.option_picks:
            for m in p["models"]:
                self.picked[(p["task"], p["question_id"])][m] = p["is_answer"]
                for c in (self.task[(m, p["task"])], self.all[m]):
                    c[0] += p["is_answer"]
                    c[1] += 1

    def __call__(self, task: str, question_id: str) -> float:
        records = []
        for m, right in self.picked[(task, question_id)].items():
            (tr, ta), (ar, aa) = self.task[(m, task)], self.all[m]
            records.append((tr - right, ta - 1, ar - right, aa - 1))
        return chance_all_miss(records)


def _wrong_by_all(data: ReportData, s: ItemStats, misses: MissChance) -> bool:
    """Every model counted chose a wrong option (none unparsed), the text arm did no better than chance, and those
    models all missing a sound item is unlikely (below MISS_CHANCE)."""
    return (s.n_models > 0 and sum(s.distractor_counts.values()) == s.n_models
            and text_arm_at_chance(data.text_arm.get((s.task, s.question_id)), s.n_options)
            and misses(s.task, s.question_id) < MISS_CHANCE)


def review_candidates(data: ReportData) -> list[dict]:
    """The flagged items as core/curation/flags.write_flags takes them: reasons, the figures behind them, each
    model's pick as option text, and the option texts as asked (to check the question is still that version)."""
    picks: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for p in data.option_picks:
        picks[(p["task"], p["question_id"])].append(p)
    out = []
    misses = MissChance(data)
    for s, why in flagged_items(data):
        reasons = why.split("; ")
        if not any(r in FOR_REVIEW for r in reasons):
            continue
        mine = picks[(s.task, s.question_id)]
        detail = []
        if NEGATIVE_DISCRIMINATION in reasons:
            detail.append(f"r_pb {s.discrimination:.2f} over {s.n_models} models")
        if WRONG_BY_ALL in reasons:
            right, asked = data.text_arm[(s.task, s.question_id)]
            who = f"all {s.n_models} models" if s.n_models > 1 else "the one model"
            detail.append(f"{who} chose a wrong option (missing it by luck: {100 * misses(s.task, s.question_id):.1f} %, "
                          f"from their other answers); text arm {right}/{asked} right (chance {100 / s.n_options:.0f} %)")
        out.append({"task": s.task, "question_id": s.question_id, "reasons": reasons, "detail": "; ".join(detail),
                    "options": [p["text"] for p in mine],
                    "answers": sorted(({"model": m, "text": p["text"], "right": p["is_answer"]}
                                       for p in mine for m in p["models"]), key=lambda a: a["model"])})
    return out


def _text_bias(data: ReportData, s: ItemStats):
    tb = data.uncertainty.text_bias if data.uncertainty else None
    return tb.item(s.task, s.question_id) if tb else None


def _text_predicted(data: ReportData, s: ItemStats) -> bool:
    """The text-only classifier picked the truth on a task where it does so above chance."""
    b = _text_bias(data, s)
    task = data.uncertainty.text_bias.tasks.get(s.task) if b else None
    return bool(b and b.hit and task and task.predictable)


def _flag_row(s: ItemStats) -> list[str]:
    return [_abbrev(s.task), s.question_id, f"{s.difficulty:.2f}", "-" if s.discrimination is None else f"{s.discrimination:.2f}",
            ",".join(s.non_functional) or "-", " ".join(f"{k}:{v}" for k, v in s.choice_counts.items())]


def flagged_items_table(data: ReportData, limit: int = FLAGGED_LIMIT) -> Table:
    return Table(["Task", "Question_id", "p", "r_pb", "non-functional", "choices"],
                 [_flag_row(s) for s, _ in flagged_items(data)[:limit]])


def flagged_caption(data: ReportData, limit: int = FLAGGED_LIMIT) -> str:
    n = len(flagged_items(data))
    shown = f"all {n}" if n <= limit else f"the first {limit} of {n}, worst first"
    return (f"Flagged items (nobody right, negative discrimination, every model wrong while the text arm is at "
            f"chance, non-functional distractors or answer predictable from text): {shown}; "
            f"every flagged item with the reason is in {FLAGGED_CSV} beside this report. "
            f"Items flagged for {' or '.join(repr(r) for r in FOR_REVIEW)} go back to the review queue (hvbench review).")


def write_flagged_csv(data: ReportData, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "question_id", "reason", "p", "r_pb", "upper_lower", "non_functional", "choices",
                    "entropy_norm", "n_models", "text_bias_p_true", "text_bias_hit"])
        for s, why in flagged_items(data):
            b = _text_bias(data, s)
            w.writerow([s.task, s.question_id, why, f"{s.difficulty:.4f}",
                        "" if s.discrimination is None else f"{s.discrimination:.4f}",
                        "" if s.upper_lower is None else f"{s.upper_lower:.4f}", ",".join(s.non_functional),
                        " ".join(f"{k}:{v}" for k, v in s.choice_counts.items()),
                        "" if s.entropy_norm is None else f"{s.entropy_norm:.4f}", s.n_models,
                        "" if b is None or b.p_true is None else f"{b.p_true:.4f}",
                        "" if b is None or b.hit is None else int(b.hit)])


def excluded_note(data: ReportData) -> str:
    limit = f"{100 * data.item_max_unparsed:.0f} %"
    if not data.excluded:
        return f"Every model counts in the item statistics (none has more than {limit} unparsed replies)."
    names = ", ".join(f"{g} ({100 * r:.0f} % unparsed)" for g, r in data.excluded.items())
    return (f"Left out of the item statistics and distractor counts: {names}; their unparsed share is above {limit}, "
            "so they would lower every item's p without telling anything about the item.")


# -- rendering ---------------------------------------------------------------------------------
NOTES = (
    "Accuracy is correct / answered items per task (rotation 0). Category average = mean of the "
    "category's task accuracies; Overall = mean of the task accuracies (the 16-task mean when all 16 "
    "are present), as in the paper's tables; a model missing some tasks gets its mean marked (have/of tasks). Unparsed replies count as wrong; failed calls are not "
    "counted and are retried by the next run. Random (mean 1/n) is the expected accuracy of a uniform "
    "guesser, the mean over items of 1/number of options (ours); Random (ref. script) divides the item "
    "count by the total option count, as the reference evaluation script does; they differ only where "
    "a task mixes option counts."
)


ITEM_NOTES = (
    "p = share of models right; r_pb = corrected point-biserial correlation with the models' accuracy on the "
    "other items (needs 3+ models with differing results); option entropy = Shannon entropy of the options the "
    "models chose divided by log2(number of options): 0 when every model picked the same option, 1 when picks "
    "spread evenly over all options; unparsed replies chose no option and are left out of it."
)


def render_markdown(data: ReportData) -> str:
    parts = [f"# Evaluation report: {data.benchmark}", "",
             f"{len(data.runs)} run(s), {len(data.tasks)} task(s), {len({(s.task, s.question_id) for s in data.items})} item(s).",
             "", "## Accuracy (%)", "", accuracy_table(data).markdown(), "", NOTES, ""]
    for title, note, headers, rows in stat_sections(data.uncertainty, data.tasks, _abbrev):
        parts += [f"## {title}", "", note, "", Table(headers, rows).markdown(), ""]
    spread = spread_table(data)
    if spread:
        parts += ["## Spread over seeds (%): mean ± standard deviation of the repeated runs", "", spread.markdown(), ""]
    circ = circular_table(data)
    if circ:
        parts += ["## Circular evaluation (%): right under every rotation of the options", "", circ.markdown(), ""]
    parts += ["## Items, baselines and correct counts", "", counts_table(data).markdown(), "",
              "## Unparsed replies", "", unparsed_table(data).markdown(), "",
              "Extraction methods (how each reply was read):", "", methods_table(data).markdown(), "",
              "## Letter choice vs answer key (position bias)", "", letter_table(data).markdown(), "",
              "## Distractor selection across models", "",
              "For every wrong option: how many models chose it (x = number of models).", "",
              distractor_table(data).markdown(), "",
              "## Item statistics", "", ITEM_NOTES, "", excluded_note(data), "",
              item_summary_table(data).markdown(), "",
              flagged_caption(data).replace(FLAGGED_CSV, f"[{FLAGGED_CSV}]({FLAGGED_CSV})"), "",
              flagged_items_table(data).markdown(), ""]
    parts += [md for md, _ in data.sections]
    if data.load_issues:
        parts += ["## Skipped benchmark lines", ""] + \
                 [f"- {i['file']}:{i['line']}: {i['message']}" for i in data.load_issues] + [""]
    return "\n".join(parts)


def legend_labels(data: ReportData) -> dict[str, str]:
    """Group label -> its legend: the model's name instead of its registry key (`gpt-4o [8f, …]` for
    `gpt4o [8f, …]`), the key beside the name only where two keys share one (`gpt-4o (gpt4o_azure)`)."""
    model_of = {v.group: v.model for v in data.runs}  # a group's label starts with its model's key
    named = {m: data.model_names.get(m) or m for m in set(model_of.values())}
    uses = Counter(named.values())
    out = {}
    for group in data.summaries:
        m = model_of.get(group)
        if m is None or not group.startswith(m):
            out[group] = group
            continue
        out[group] = (named[m] if uses[named[m]] == 1 else f"{named[m]} ({m})") + group[len(m):]
    return out


def charts(data: ReportData) -> list[str]:
    out = []
    legend = legend_labels(data)
    cats = [c for c in CATEGORIES if any(task_info(t) and task_info(t).category == c for t in data.tasks)]
    groups = cats + ["Overall"]

    def vals(summary: Summary) -> list[float | None]:
        return [None if summary.categories[c] is None else 100 * summary.categories[c] for c in cats] + \
               [None if summary.overall is None else 100 * summary.overall]

    refs = {"Random": vals(data.random_summary)}
    if data.human:
        refs["Human"] = vals(data.human)
    out.append(svg.grouped_bars(groups, {legend[k]: vals(s) for k, s in data.summaries.items()},
                                "Category averages and overall (%)", refs=refs))
    tasks = [_abbrev(t) for t in data.tasks]
    out.append(svg.grouped_bars(
        tasks, {legend[k]: [100 * s.tasks[t] if t in s.tasks else (100 * s.extra_tasks[t] if t in s.extra_tasks else None)
                            for t in data.tasks] for k, s in data.summaries.items()},
        "Per-task accuracy (%)", refs={"Random": [100 * data.random[t]["expected"] for t in data.tasks]}, width=960))
    merged: Counter = Counter()
    for h in data.histogram.values():
        merged.update(h)
    out.append(svg.histogram(dict(merged), "Distractors by number of models choosing them", "models choosing"))
    pts = [(s.difficulty, s.discrimination, f"{s.task}/{s.question_id}") for s in data.items if s.discrimination is not None]
    if pts:
        out.append(svg.scatter(pts, "Item difficulty vs discrimination", "difficulty p", "r_pb"))
    return out


def render_html(data: ReportData) -> str:
    sections = [f"<h1>Evaluation report: {escape(data.benchmark)}</h1>",
                "<h2>Accuracy (%)</h2>", accuracy_table(data).html(), f"<p>{escape(NOTES)}</p>",
                '<div class="charts">' + "".join(charts(data)) + "</div>"]
    for title, note, headers, rows in stat_sections(data.uncertainty, data.tasks, _abbrev):
        sections += [f"<h2>{escape(title)}</h2>", f"<p>{escape(note)}</p>", Table(headers, rows).html()]
    spread = spread_table(data)
    if spread:
        sections += ["<h2>Spread over seeds (%)</h2>", spread.html()]
    circ = circular_table(data)
    if circ:
        sections += ["<h2>Circular evaluation (%)</h2>", circ.html()]
    sections += ["<h2>Items, baselines and correct counts</h2>", counts_table(data).html(),
                 "<h2>Unparsed replies</h2>", unparsed_table(data).html(), methods_table(data).html(),
                 "<h2>Letter choice vs answer key</h2>", letter_table(data).html(),
                 "<h2>Distractor selection across models</h2>", distractor_table(data).html(),
                 "<h2>Item statistics</h2>", f"<p>{escape(ITEM_NOTES)}</p>", f"<p>{escape(excluded_note(data))}</p>",
                 item_summary_table(data).html(), "<h3>Flagged items</h3>",
                 "<p>" + escape(flagged_caption(data)).replace(FLAGGED_CSV, f'<a href="{FLAGGED_CSV}">{FLAGGED_CSV}</a>')
                 + "</p>", flagged_items_table(data).html()]
    sections += [html for _, html in data.sections]
    if data.load_issues:
        sections += ["<h2>Skipped benchmark lines</h2><ul>"] + \
                    [f"<li>{escape(i['file'])}:{i['line']}: {escape(i['message'])}</li>" for i in data.load_issues] + ["</ul>"]
    style = ("body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0;"
             "font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child"
             "{text-align:left}.charts svg{margin:0.5em;border:1px solid #eee}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>hvbench report {escape(data.benchmark)}</title>"
            f"<style>{style}</style></head><body>{''.join(sections)}</body></html>")


def write_report(data: ReportData, out_dir: str | Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out_dir / "report.md", "html": out_dir / "report.html", "flagged": out_dir / FLAGGED_CSV}
    tmp = paths["flagged"].with_suffix(".tmp")
    write_flagged_csv(data, tmp)
    tmp.replace(paths["flagged"])
    for key, text in (("markdown", render_markdown(data)), ("html", render_html(data))):
        tmp = paths[key].with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(paths[key])
    return paths


# -- warehouse rows ----------------------------------------------------------------------------
def task_score_rows(data: ReportData) -> list[dict]:
    rows = []
    for v in data.runs:
        for t, s in data.scores[v.label].items():
            rows.append({"run_id": v.run_id, "label": v.label, "task": t, "n_items": s.n_items,
                         "n_correct": s.n_correct, "n_unparsed": s.n_unparsed, "accuracy": s.accuracy,
                         "unparsed_rate": s.unparsed_rate, "circular_accuracy": data.circular.get(v.label, {}).get(t),
                         "random_expected": data.random.get(t, {}).get("expected"),
                         "random_reference": data.random.get(t, {}).get("reference")})
    return rows


def item_stat_rows(data: ReportData) -> list[dict]:
    return [{"task": s.task, "question_id": s.question_id, "n_models": s.n_models, "n_options": s.n_options,
             "difficulty": s.difficulty, "discrimination": s.discrimination, "upper_lower": s.upper_lower,
             "choice_counts": s.choice_counts, "non_functional": s.non_functional, "entropy_bits": s.entropy_bits,
             "entropy_norm": s.entropy_norm} for s in data.items]
