"""Text bias without any model call: how well the question and option texts alone give the answer away.

Per task, a classifier learns from the benchmark's own items which option is the truth, then scores items it
was not trained on. Every option is one example with features of its text alone and relative to its siblings:
length (characters, words, rank among the options, z-score within the item, longest / shortest), word overlap
with the question and with the other options (and their ranks), position (first, last, relative place) and
TF-IDF of its words. A logistic regression "is this option the truth" scores each option; the item's options
are compared by a softmax of those scores and the argmax is the guess. Folds are grouped by clip (GroupKFold):
questions on one clip are never in training while one of them is scored, so a clip's template cannot leak.

Per item: `p_true` (held-out probability of the true option) and `hit` (the argmax is the truth).
Per task: hits / items, the chance level (mean over items of 1 / options), the share above chance
((accuracy - chance) / (1 - chance)) and a one-sided binomial test of the hits against the chance level.
A task with `p_value < alpha` is predictable from text: a model can score there without the video.

    result = text_bias(items)   # items: task, question_id, cluster, question, options (texts), answer_index
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

TEXTBIAS_CODE_VERSION = "textbias-v1"
DEFAULT_FOLDS = 5
MIN_ITEMS = 20  # fewer items per task: not scored (too little to train on and to test)
DEFAULT_ALPHA = 0.05
_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _rank(values: Sequence[float]) -> list[float]:
    """Rank in [0, 1] (0 = smallest), ties share their mean rank; 0.5 for a single option."""
    n = len(values)
    if n < 2:
        return [0.5] * n
    order = sorted(range(n), key=lambda i: values[i])
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 / (n - 1)
        i = j + 1
    return ranks


def _z(values: Sequence[float]) -> list[float]:
    m = sum(values) / len(values)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / len(values))
    return [0.0 if sd == 0 else (v - m) / sd for v in values]


DENSE_FEATURES = ("log_chars", "log_words", "len_rank", "len_z", "longest", "shortest", "q_overlap",
                  "q_overlap_rank", "sib_overlap", "sib_overlap_rank", "first", "last", "position", "has_digit")


def option_features(question: str, options: Sequence[str]) -> list[list[float]]:
    """One row of DENSE_FEATURES per option."""
    n = len(options)
    chars = [float(len(o)) for o in options]
    words = [_words(o) for o in options]
    qw = _words(question)

    def jaccard(a: set, b: set) -> float:
        return len(a & b) / len(a | b) if a | b else 0.0

    q_over = [jaccard(w, qw) for w in words]
    sib = [sum(jaccard(words[i], words[j]) for j in range(n) if j != i) / max(1, n - 1) for i in range(n)]
    len_rank, len_z = _rank(chars), _z(chars)
    return [[math.log1p(chars[i]), math.log1p(len(options[i].split())), len_rank[i], len_z[i],
             float(chars[i] == max(chars)), float(chars[i] == min(chars)), q_over[i], _rank(q_over)[i], sib[i],
             _rank(sib)[i], float(i == 0), float(i == n - 1), i / (n - 1) if n > 1 else 0.0,
             float(any(ch.isdigit() for ch in options[i]))] for i in range(n)]


@dataclass(frozen=True)
class ItemBias:
    task: str
    question_id: str
    n_options: int
    p_true: float | None  # held-out probability of the true option (None: task not scored)
    predicted: int | None  # index of the argmax option
    hit: bool | None


@dataclass(frozen=True)
class TaskBias:
    task: str
    n_items: int
    n_hits: int
    accuracy: float | None
    chance: float
    above_chance: float | None  # (accuracy - chance) / (1 - chance): 0 = chance, 1 = every answer predicted
    p_value: float | None  # one-sided binomial test of n_hits against chance
    predictable: bool  # p_value < alpha
    n_folds: int
    note: str


@dataclass(frozen=True)
class TextBias:
    items: list[ItemBias]
    tasks: dict[str, TaskBias]
    alpha: float

    def item(self, task: str, question_id: str) -> ItemBias | None:
        return self._index.get((task, str(question_id)))

    @cached_property
    def _index(self) -> dict[tuple[str, str], ItemBias]:
        return {(i.task, i.question_id): i for i in self.items}


def _vectorizer():
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, token_pattern=r"[a-z0-9']+", min_df=2, sublinear_tf=True)


def _design(items: Sequence[Mapping], vec, fit: bool):
    from scipy.sparse import hstack

    texts = [o for it in items for o in it["options"]]
    dense = _dense_only(items)
    try:
        tfidf = vec.fit_transform(texts) if fit else vec.transform(texts)
    except ValueError:  # no word occurs twice in the training options: no vocabulary, dense features only
        return dense, False
    return hstack([dense, tfidf]).tocsr(), True


def _fit_predict(train: Sequence[Mapping], test: Sequence[Mapping], seed: int) -> list[np.ndarray]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import MaxAbsScaler

    vec = _vectorizer()
    x_train, has_tfidf = _design(train, vec, fit=True)
    y = np.array([float(j == it["answer_index"]) for it in train for j in range(len(it["options"]))])
    x_test = _design(test, vec, fit=False)[0] if has_tfidf else _dense_only(test)
    scaler = MaxAbsScaler().fit(x_train)
    # balanced classes: one truth per item would otherwise push every score towards "not the truth"
    model = LogisticRegression(C=1.0, solver="liblinear", max_iter=1000, class_weight="balanced", random_state=seed)
    model.fit(scaler.transform(x_train), y)
    scores = model.decision_function(scaler.transform(x_test))
    out, k = [], 0
    for it in test:
        s = scores[k:k + len(it["options"])]
        k += len(it["options"])
        e = np.exp(s - s.max())
        out.append(e / e.sum())
    return out


def _dense_only(items: Sequence[Mapping]):
    from scipy.sparse import csr_matrix

    return csr_matrix(np.array([row for it in items for row in it["_dense"]], dtype=float))


def _binomial_p(k: int, n: int, chance: float) -> float:
    from scipy.stats import binomtest

    return float(binomtest(k, n, chance, alternative="greater").pvalue) if n else 1.0


def text_bias(items: Iterable[Mapping], n_folds: int = DEFAULT_FOLDS, alpha: float = DEFAULT_ALPHA,
              min_items: int = MIN_ITEMS, seed: int = 0) -> TextBias:
    """Items: `task`, `question_id`, `cluster` (clip id), `question`, `options` (texts in the published order)
    and `answer_index`. Each task is learnt and scored on its own (tasks have their own templates)."""
    from sklearn.model_selection import GroupKFold

    by_task: dict[str, list[Mapping]] = defaultdict(list)
    for it in items:
        if len(it["options"]) >= 2:  # features of an item depend on it alone: computed once, not per fold
            by_task[it["task"]].append({**it, "_dense": option_features(it["question"], it["options"])})
    out_items: list[ItemBias] = []
    tasks: dict[str, TaskBias] = {}
    for task, mine in by_task.items():
        chance = float(np.mean([1 / len(it["options"]) for it in mine]))
        groups = [str(it["cluster"]) for it in mine]
        folds = min(n_folds, len(set(groups)))
        if len(mine) < min_items or folds < 2:
            why = f"not scored: {len(mine)} item(s) on {len(set(groups))} clip(s) (needs {min_items} items on 2+ clips)"
            tasks[task] = TaskBias(task, len(mine), 0, None, chance, None, None, False, 0, why)
            out_items += [ItemBias(task, str(it["question_id"]), len(it["options"]), None, None, None) for it in mine]
            continue
        probs: dict[int, np.ndarray] = {}
        for train_idx, test_idx in GroupKFold(n_splits=folds).split(mine, groups=groups):
            got = _fit_predict([mine[i] for i in train_idx], [mine[i] for i in test_idx], seed)
            probs.update(zip(test_idx, got))
        hits = 0
        for i, it in enumerate(mine):
            p = probs[i]
            pred = int(np.argmax(p))
            hit = pred == int(it["answer_index"])
            hits += hit
            out_items.append(ItemBias(task, str(it["question_id"]), len(it["options"]),
                                      float(p[int(it["answer_index"])]), pred, hit))
        acc = hits / len(mine)
        p_value = _binomial_p(hits, len(mine), chance)
        tasks[task] = TaskBias(task, len(mine), hits, acc, chance, (acc - chance) / (1 - chance), p_value,
                               p_value < alpha, folds,
                               f"{hits}/{len(mine)} predicted from text, chance {chance:.2f}, p={p_value:.3g}")
    return TextBias(out_items, tasks, alpha)


def manifest_section(result: TextBias) -> dict:
    """Per task, for the export manifest."""
    return {"code_version": TEXTBIAS_CODE_VERSION, "alpha": result.alpha,
            "method": "per-option logistic regression on length, position, word-overlap and TF-IDF features, "
                      "clip-grouped k-fold, argmax per item; one-sided binomial test against mean 1/options",
            "per_task": {t: {"items": b.n_items, "predicted": b.n_hits,
                             "accuracy": None if b.accuracy is None else round(b.accuracy, 4),
                             "chance": round(b.chance, 4),
                             "above_chance": None if b.above_chance is None else round(b.above_chance, 4),
                             "p_value": b.p_value, "predictable": b.predictable, "note": b.note}
                         for t, b in sorted(result.tasks.items())}}


def items_from_pool(rows: Iterable[Mapping]) -> list[dict]:
    """question_pool / export rows (options as [{"letter", "text"}], answer letter, video_id) -> text_bias items;
    the clip is the video_id."""
    out = []
    for r in rows:
        options = json.loads(r["options"]) if isinstance(r["options"], str) else r["options"]
        letters = [o["letter"] for o in options]
        if r.get("answer") not in letters:
            continue
        out.append({"task": r["task"], "question_id": str(r["question_id"]), "cluster": r.get("video_id") or r["question_id"],
                    "question": r.get("question") or "", "options": [o["text"] for o in options],
                    "answer_index": letters.index(r["answer"])})
    return out


def item_rows(result: TextBias) -> list[dict]:
    """One row per item for the `text_bias` table."""
    return [{"question_id": i.question_id, "task": i.task, "n_options": i.n_options, "p_true": i.p_true,
             "predicted_index": i.predicted, "hit": i.hit,
             "task_predictable": result.tasks[i.task].predictable if i.task in result.tasks else None}
            for i in result.items]
