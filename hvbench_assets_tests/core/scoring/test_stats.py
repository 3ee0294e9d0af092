"""Clustered bootstrap, paired comparison, option-order spread and slices (core/scoring/stats.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.scoring.stats import (
    OVERALL,
    accuracy_intervals,
    option_order_spread,
    paired_difference,
    slice_scores,
)


def correlated_rows(n_clips: int = 60, per_clip: int = 5, seed: int = 1) -> list[dict]:
    """Every clip has its own difficulty: its questions are answered alike."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_clips):
        p = rng.uniform(0, 1)
        for q in range(per_clip):
            rows.append({"task": "Human_Count" if q % 2 else "Emotion_Recognition", "cluster": f"clip{c}",
                         "question_id": f"c{c}q{q}", "correct": bool(rng.uniform() < p)})
    return rows


def width(iv) -> float:
    return iv.high - iv.low


def test_clustered_interval_is_wider_than_the_naive_one_when_a_clips_questions_go_together():
    rows = correlated_rows()
    clustered = accuracy_intervals(rows)
    naive = accuracy_intervals([{**r, "cluster": r["question_id"]} for r in rows])
    for key in ("Human_Count", "Emotion_Recognition", OVERALL):
        assert clustered[key].estimate == pytest.approx(naive[key].estimate)
        assert clustered[key].low <= clustered[key].estimate <= clustered[key].high
    assert width(clustered[OVERALL]) > 1.4 * width(naive[OVERALL])
    assert clustered[OVERALL].n_clusters == 60 and naive[OVERALL].n_clusters == 300


def test_independent_items_give_about_the_same_interval_either_way():
    rng = np.random.default_rng(3)
    rows = [{"task": "T", "cluster": f"clip{i // 5}", "question_id": str(i), "correct": bool(rng.uniform() < 0.6)}
            for i in range(600)]
    clustered = accuracy_intervals(rows)[OVERALL]
    naive = accuracy_intervals([{**r, "cluster": r["question_id"]} for r in rows])[OVERALL]
    assert 0.75 < width(clustered) / width(naive) < 1.3
    # the normal-approximation width of a proportion: 2 x 1.96 x sqrt(p(1-p)/n)
    p = clustered.estimate
    assert width(naive) == pytest.approx(2 * 1.96 * np.sqrt(p * (1 - p) / 600), rel=0.15)


def test_overall_is_the_mean_of_task_accuracies_not_of_items():
    rows = [{"task": "A", "cluster": str(i), "question_id": str(i), "correct": True} for i in range(10)]
    rows += [{"task": "B", "cluster": f"b{i}", "question_id": f"b{i}", "correct": i == 0} for i in range(2)]
    assert accuracy_intervals(rows, n_boot=50)[OVERALL].estimate == pytest.approx((1.0 + 0.5) / 2)


def test_the_bootstrap_is_seeded():
    rows = correlated_rows()
    assert accuracy_intervals(rows, seed=7) == accuracy_intervals(rows, seed=7)
    assert accuracy_intervals(rows, seed=7)[OVERALL] != accuracy_intervals(rows, seed=8)[OVERALL]


def test_paired_difference_of_identical_models_is_zero_with_p_1():
    rows = correlated_rows()
    for d in paired_difference(rows, rows, "a", "b"):
        assert (d.difference, d.low, d.high, d.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_paired_difference_finds_a_clearly_better_model():
    rows = correlated_rows()
    rng = np.random.default_rng(5)
    better = [{**r, "correct": r["correct"] or rng.uniform() < 0.5} for r in rows]  # fixes half its errors
    overall = next(d for d in paired_difference(better, rows, "better", "base") if d.task == OVERALL)
    assert overall.difference > 0.1 and overall.low > 0 and overall.p_value < 0.01
    assert overall.n_items == 300 and overall.n_clusters == 60


def test_paired_difference_of_a_small_random_gap_is_not_significant():
    rows = correlated_rows()
    rng = np.random.default_rng(9)
    flipped = [{**r, "correct": (not r["correct"]) if rng.uniform() < 0.05 else r["correct"]} for r in rows]
    overall = next(d for d in paired_difference(flipped, rows) if d.task == OVERALL)
    assert overall.low < 0 < overall.high or overall.difference == 0
    assert overall.p_value > 0.05


def test_paired_difference_uses_only_the_items_both_answered():
    a = [{"task": "T", "cluster": str(i), "question_id": str(i), "correct": True} for i in range(10)]
    b = [{"task": "T", "cluster": str(i), "question_id": str(i), "correct": False} for i in range(5, 15)]
    d = next(x for x in paired_difference(a, b, n_boot=100) if x.task == OVERALL)
    assert d.n_items == 5 and d.difference == 1.0


def test_option_order_spread_by_hand():
    # two tasks, three rotations; task A right 2/2, 1/2, 0/2 -> mean 0.5, population sd sqrt(1/6)
    rows = []
    for rot, rights in enumerate([(1, 1), (1, 0), (0, 0)]):
        for q, ok in enumerate(rights):
            rows.append({"task": "A", "question_id": str(q), "rotation": rot, "correct": bool(ok)})
            rows.append({"task": "B", "question_id": str(q), "rotation": rot, "correct": True})
    spread = option_order_spread(rows)
    assert spread["A"].mean == pytest.approx(0.5) and spread["A"].std == pytest.approx(np.sqrt(1 / 6))
    assert spread["B"].std == 0 and spread["A"].n_orders == 3
    assert spread[OVERALL].values == pytest.approx((1.0, 0.75, 0.5))


def test_option_order_spread_skips_rotations_not_answered_for_every_item():
    rows = [{"task": "A", "question_id": "0", "rotation": 0, "correct": True},
            {"task": "A", "question_id": "1", "rotation": 0, "correct": False},
            {"task": "A", "question_id": "0", "rotation": 1, "correct": True}]
    assert option_order_spread(rows) == {}


def test_slices_below_the_minimum_show_only_their_count():
    rows = correlated_rows()
    for i, r in enumerate(rows):
        r["L3 gender"] = "female" if i < 250 else "male"
        r["L10 voice class"] = None
    got = {(s.attribute, s.value): s for s in slice_scores(rows, ["L3 gender", "L10 voice class"], min_items=100,
                                                          n_boot=200)}
    assert set(got) == {("L3 gender", "female"), ("L3 gender", "male")}
    female, male = got[("L3 gender", "female")], got[("L3 gender", "male")]
    assert female.n_items == 250 and female.accuracy == pytest.approx(np.mean([r["correct"] for r in rows[:250]]))
    assert female.low < female.accuracy < female.high
    assert male.n_items == 50 and male.accuracy is None
