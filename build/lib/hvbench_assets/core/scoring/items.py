"""Item statistics across models (classical test theory, with models as the examinees).

difficulty      share of models answering right (the p-value; high = easy)
discrimination  corrected point-biserial: correlation between being right on this item and the model's
                accuracy on the other items of the benchmark; also the upper-lower index (top third of
                models by that rest score minus bottom third). None when it is undefined.
distractors     for each wrong option, how many models chose it; one chosen by nobody is non-functional
entropy         Shannon entropy of the options the models chose, in bits and normalised by log2(number of
                options), so 0 = every model picked the same option and 1 = picks spread evenly over all
                options. Unparsed replies chose no option and are left out (they are counted under
                `unparsed` in choice_counts); None when no model chose an option.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev

ItemKey = tuple[str, str]  # (task, question_id)


@dataclass(frozen=True)
class ItemStats:
    task: str
    question_id: str
    n_models: int
    n_options: int
    difficulty: float
    discrimination: float | None
    upper_lower: float | None
    choice_counts: dict[str, int]  # letter -> models choosing it; key "unparsed" for no letter
    distractor_counts: dict[str, int]  # wrong letters only
    non_functional: list[str]  # wrong letters nobody chose
    entropy_bits: float | None  # None: no model chose an option
    entropy_norm: float | None  # in [0, 1]


def _entropy(counts: Iterable[int]) -> float:
    counts = [c for c in counts if c]
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts) if total else 0.0


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 3 or pstdev(xs) == 0 or pstdev(ys) == 0:
        return None
    mx, my = fmean(xs), fmean(ys)
    cov = fmean((x - mx) * (y - my) for x, y in zip(xs, ys))
    return cov / (pstdev(xs) * pstdev(ys))


def item_statistics(rows: Iterable[Mapping]) -> list[ItemStats]:
    """Rows: one per (model, item) with `model`, `task`, `question_id`, `answer`, `letters` (all option
    letters), `chosen` (letter in the original order, or None) and `correct`."""
    by_item: dict[ItemKey, dict[str, Mapping]] = defaultdict(dict)
    for r in rows:
        by_item[(r["task"], str(r["question_id"]))][r["model"]] = r
    models = sorted({m for per in by_item.values() for m in per})
    # each model's total over the items it answered, to form rest scores
    totals = {m: [0, 0] for m in models}
    for per in by_item.values():
        for m, r in per.items():
            totals[m][0] += bool(r["correct"])
            totals[m][1] += 1
    out = []
    for (task, qid), per in sorted(by_item.items()):
        answered = sorted(per)
        first = per[answered[0]]
        letters = list(first["letters"])
        right = [float(bool(per[m]["correct"])) for m in answered]
        rest = []
        for m in answered:
            c, n = totals[m]
            rest.append((c - right[answered.index(m)]) / (n - 1) if n > 1 else 0.0)
        counts = Counter(per[m]["chosen"] or "unparsed" for m in answered)
        choice_counts = {x: counts.get(x, 0) for x in letters}
        if counts.get("unparsed"):
            choice_counts["unparsed"] = counts["unparsed"]
        distractors = {x: choice_counts[x] for x in letters if x != first["answer"]}
        picked = [choice_counts[x] for x in letters]
        ent = _entropy(picked) if sum(picked) else None
        out.append(ItemStats(
            task=task, question_id=qid, n_models=len(answered), n_options=len(letters),
            difficulty=fmean(right), discrimination=_pearson(right, rest), upper_lower=_upper_lower(right, rest),
            choice_counts=choice_counts, distractor_counts=distractors,
            non_functional=[x for x, c in distractors.items() if c == 0],
            entropy_bits=ent, entropy_norm=None if ent is None else ent / math.log2(len(letters)) if len(letters) > 1 else 0.0,
        ))
    return out


def _upper_lower(right: Sequence[float], rest: Sequence[float]) -> float | None:
    """p(right) among the top third of models by rest score minus p among the bottom third. Models
    tied at a cut share its remaining places (their mean counts), so the order of ties never matters."""
    k = len(right) // 3
    if k < 1:
        return None
    pairs = sorted(zip(rest, right))
    return _extreme_mean(pairs[::-1], k) - _extreme_mean(pairs, k)


def _extreme_mean(pairs: Sequence[tuple[float, float]], k: int) -> float:
    total, left, i = 0.0, k, 0
    while left > 0:
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        group = [r for _, r in pairs[i:j]]
        take = min(left, len(group))
        total += take * fmean(group)
        left -= take
        i = j
    return total / k


def distractor_histogram(stats: Iterable[ItemStats]) -> dict[str, dict[int, int]]:
    """Per task: number of models choosing a distractor -> how many distractors were chosen that
    often (the paper's distractor-selection histogram; X = 0 are the non-functional ones)."""
    hist: dict[str, Counter] = defaultdict(Counter)
    for s in stats:
        for c in s.distractor_counts.values():
            hist[s.task][c] += 1
    return {t: dict(sorted(h.items())) for t, h in hist.items()}
