"""Item statistics, distractor frequencies, circular verdicts and the rendered report, on response
rows whose every number is worked out by hand here."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest

from hvbench_assets.core.benchmark.layout import BenchmarkItem, Option
from hvbench_assets.core.scoring.circular import (
    circular_correct,
    original_letter,
    rotate_item,
)
from hvbench_assets.core.scoring.items import distractor_histogram, item_statistics
from hvbench_assets.core.scoring.report import (
    build_report,
    load_baseline_file,
    render_html,
    render_markdown,
    task_score_rows,
    write_report,
)

# 4 models x 4 items. Answers: ER q1=A, q2=B (4 options); HC q1=C (4 options); AVSM q1=A (2 options)
KEY = {("Emotion_Recognition", "q1"): ("A", 4), ("Emotion_Recognition", "q2"): ("B", 4),
       ("Human_Count", "q1"): ("C", 4), ("Audio_Visual_Speaker_Matching", "q1"): ("A", 2)}
CHOICES = {  # model -> chosen letter per item (None = unparsed)
    "m1": {"Emotion_Recognition/q1": "A", "Emotion_Recognition/q2": "B", "Human_Count/q1": "C", "Audio_Visual_Speaker_Matching/q1": "A"},
    "m2": {"Emotion_Recognition/q1": "A", "Emotion_Recognition/q2": "C", "Human_Count/q1": "C", "Audio_Visual_Speaker_Matching/q1": "B"},
    "m3": {"Emotion_Recognition/q1": "B", "Emotion_Recognition/q2": "C", "Human_Count/q1": "D", "Audio_Visual_Speaker_Matching/q1": "A"},
    "m4": {"Emotion_Recognition/q1": None, "Emotion_Recognition/q2": "B", "Human_Count/q1": "A", "Audio_Visual_Speaker_Matching/q1": "B"},
}


def rows():
    out = []
    for model, picks in CHOICES.items():
        for (task, qid), (ans, n) in KEY.items():
            chosen = picks[f"{task}/{qid}"]
            out.append({"run_id": f"bench__{model}__x", "benchmark": "bench", "model": model, "task": task,
                        "question_id": qid, "rotation": 0, "n_options": n, "letters": list("ABCD"[:n]),
                        "answer": ans, "answer_original": ans, "chosen": chosen, "chosen_original": chosen,
                        "correct": chosen == ans, "status": "parsed" if chosen else "unparsed",
                        "method": "bare_letter" if chosen else "no_match"})
    return out


def test_item_statistics_by_hand():
    stats = {(s.task, s.question_id): s for s in item_statistics(rows())}
    er1 = stats[("Emotion_Recognition", "q1")]
    assert er1.difficulty == pytest.approx(0.5)  # m1, m2 right
    assert er1.choice_counts == {"A": 2, "B": 1, "C": 0, "D": 0, "unparsed": 1}
    assert er1.distractor_counts == {"B": 1, "C": 0, "D": 0} and er1.non_functional == ["C", "D"]
    p = np.array([2, 1]) / 3  # A, B among the 3 models that chose an option (the unparsed reply chose none)
    assert er1.entropy_bits == pytest.approx(-(p * np.log2(p)).sum())
    assert er1.entropy_norm == pytest.approx(er1.entropy_bits / 2)  # log2(4 options)
    # corrected point-biserial: right on ER q1 vs accuracy on the other 3 items, per model
    right = np.array([1, 1, 0, 0.0])
    rest = np.array([3 / 3, 1 / 3, 1 / 3, 1 / 3])  # m1: 3 of 3; m2: HC; m3: AVSM; m4: ER q2
    assert er1.discrimination == pytest.approx(np.corrcoef(right, rest)[0, 1])
    # upper-lower: top third = m1 (right); bottom third = one place shared by the tied m2, m3, m4 (1/3 right)
    assert er1.upper_lower == pytest.approx(1.0 - 1 / 3)
    avsm = stats[("Audio_Visual_Speaker_Matching", "q1")]
    assert avsm.difficulty == 0.5 and avsm.non_functional == [] and avsm.entropy_norm == pytest.approx(1.0)


def test_discrimination_undefined_without_variance():
    same = [r for r in rows() if r["model"] in ("m1", "m2")]  # two models only: fewer than three
    assert all(s.discrimination is None for s in item_statistics(same))


def test_distractor_histogram_counts_models_per_distractor():
    hist = distractor_histogram(item_statistics(rows()))
    # ER q1 distractors chosen by (B:1, C:0, D:0); ER q2 (A:0, C:2, D:0)
    assert hist["Emotion_Recognition"] == {0: 4, 1: 1, 2: 1}
    assert hist["Human_Count"] == {0: 1, 1: 2}  # A:1, B:0, D:1
    assert hist["Audio_Visual_Speaker_Matching"] == {2: 1}


def test_rotation_round_trip():
    item = BenchmarkItem("Emotion_Recognition", "q", "?", (Option("A", "x"), Option("B", "y"), Option("C", "z")),
                         "B", "v.mp4", video_path=None)
    r1 = rotate_item(item, 1)
    assert [o.text for o in r1.options] == ["z", "x", "y"] and r1.answer == "C"
    for shift in range(3):
        rot = rotate_item(item, shift)
        assert rot.option_text(rot.answer) == "y"
        assert original_letter(rot.answer, shift, 3) == "B"
    assert circular_correct([{"model": "m", "task": "t", "question_id": "q", "rotation": s, "n_options": 3,
                              "correct": s != 2} for s in range(3)]) == {("m", "t", "q"): False}
    # an item with a missing rotation is not judged
    assert circular_correct([{"model": "m", "task": "t", "question_id": "q", "rotation": 0, "n_options": 3,
                              "correct": True}]) == {}


def test_report_numbers(tmp_path):
    human = tmp_path / "human.csv"
    human.write_text("task,accuracy\nER,87.6\nHC,92.5\nAVSM,96.0\n")
    data = build_report(rows(), benchmark="bench", human=load_baseline_file(human))
    m1, m2, m4 = data.summaries["m1"], data.summaries["m2"], data.summaries["m4"]
    assert m1.tasks == {"Emotion_Recognition": 1.0, "Human_Count": 1.0, "Audio_Visual_Speaker_Matching": 1.0}
    assert m2.tasks["Emotion_Recognition"] == 0.5 and m2.overall == pytest.approx((0.5 + 1 + 0) / 3)
    assert m2.categories["Emotion Perception"] == 0.5 and m2.categories["Behavior Analysis"] is None
    assert data.scores["m4"]["Emotion_Recognition"].n_unparsed == 1 and m4.tasks["Emotion_Recognition"] == 0.5
    assert data.random["Audio_Visual_Speaker_Matching"]["expected"] == 0.5
    assert data.random_summary.overall == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    assert data.human.tasks["Human_Count"] == pytest.approx(0.925)
    md = render_markdown(data)
    assert "| m2 | 50.0 | 50.0 | 100.0 | 100.0 | 0.0 | 0.0 | 50.0 |" in md  # ER, EP avg, HC, PR avg, AVSM, SVA avg, overall
    assert "Random (mean 1/n)" in md and "Random (ref. script" in md and "| Human |" in md
    assert "| ER | 6 | 4 | 33.3 |" in md  # 6 distractors, 4 non-functional
    html = render_html(data)
    assert html.count("<svg") == 4 and "<table>" in html
    paths = write_report(data, tmp_path / "out")
    assert paths["markdown"].read_text() == md and paths["html"].exists()
    scores = {(r["label"], r["task"]): r for r in task_score_rows(data)}
    assert scores[("m4", "Emotion_Recognition")]["unparsed_rate"] == 0.5


def test_seeds_are_averaged_and_counted_once_in_item_statistics():
    base = [r for r in rows() if r["model"] == "m2"]
    runs, all_rows = [], []
    for seed, flip in ((0, False), (1, True)):
        run_id = f"bench__m2__s{seed}"
        runs.append({"run_id": run_id, "model": "m2", "config": {"n_frames": 8, "seed": seed, "concurrency": 4}})
        for r in base:
            correct = (not r["correct"]) if flip and r["task"] == "Human_Count" else r["correct"]
            all_rows.append({**r, "run_id": run_id, "correct": correct})
    data = build_report(all_rows, runs, benchmark="bench")
    assert [v.label for v in data.runs] == ["m2 seed 0", "m2 seed 1"]
    assert list(data.summaries) == ["m2 (mean of 2)"]
    group = data.summaries["m2 (mean of 2)"]
    assert group.tasks["Human_Count"] == pytest.approx(0.5)  # right in seed 0, wrong in seed 1
    assert data.spread["m2 (mean of 2)"]["Human_Count"] == pytest.approx((0.5, 0.5, 2))
    assert all(s.n_models == 1 for s in data.items)
    md = render_markdown(data)
    assert "Spread over seeds" in md and "50.0 ± 50.0" in md


def test_one_model_with_two_samplings_gets_two_labelled_rows():
    base = [r for r in rows() if r["model"] == "m1"]
    runs = [{"run_id": "a", "model": "m1", "config": {"n_frames": 4}},
            {"run_id": "b", "model": "m1", "config": {"n_frames": None, "fps": 1.0}}]
    data = build_report([{**r, "run_id": rid} for rid in ("a", "b") for r in base], runs, benchmark="bench")
    labels = sorted(data.summaries)
    assert len(labels) == 2 and labels[0].startswith("m1 [1.0fps, ") and labels[1].startswith("m1 [4f, ")
    assert all(s.n_models == 2 for s in data.items)  # two configurations count as two examinees


def test_option_picks_name_the_models_behind_each_distractor():
    picks = {(p["task"], p["question_id"], p["letter"]): p for p in build_report(rows(), benchmark="b").option_picks}
    assert len(picks) == 4 + 4 + 4 + 2
    er1 = [picks[("Emotion_Recognition", "q1", x)] for x in "ABCD"]
    assert [(p["is_answer"], p["n_models"], p["models"]) for p in er1] == \
        [(True, 2, ["m1", "m2"]), (False, 1, ["m3"]), (False, 0, []), (False, 0, [])]


def test_letter_choice_table_against_the_key():
    data = build_report(rows(), benchmark="b")
    assert data.letter_counts["answer key"] == {"A": 2, "B": 1, "C": 1}
    assert data.letter_counts["m4"] == {"unparsed": 1, "B": 2, "A": 1}
    assert "| m4 | 25.0 | 50.0 | 0.0 | 0.0 | 25.0 |" in render_markdown(data)  # A, B, C, D, unparsed


def _with_refuser():
    refuser = [{**r, "run_id": "bench__m5__x", "model": "m5", "chosen": None, "chosen_original": None, "correct": False,
                "status": "unparsed", "method": "no_match"} for r in rows() if r["model"] == "m1"]
    return rows() + refuser


def test_option_entropy_stays_within_0_and_1_and_ignores_unparsed():
    stats = item_statistics(_with_refuser())  # m4 leaves one item unparsed, m5 every item
    assert all(0.0 <= s.entropy_norm <= 1.0 for s in stats)
    avsm = next(s for s in stats if s.task == "Audio_Visual_Speaker_Matching")
    assert avsm.choice_counts["unparsed"] == 1 and avsm.entropy_norm == pytest.approx(1.0)  # A:2, B:2 over 2 options
    nobody = item_statistics([{**r, "chosen": None, "chosen_original": None} for r in rows() if r["model"] == "m1"])
    assert all(s.entropy_norm is None for s in nobody)


def test_a_model_that_refuses_everything_is_left_out_of_item_statistics_and_named(tmp_path):
    data = build_report(_with_refuser(), benchmark="bench")
    assert data.excluded == {"m5": 1.0} and all(s.n_models == 4 for s in data.items)
    assert "m5" in data.summaries  # still in the accuracy tables
    er1 = next(s for s in data.items if (s.task, s.question_id) == ("Emotion_Recognition", "q1"))
    assert er1.difficulty == pytest.approx(0.5)  # m5 would have pulled it to 0.4
    md = render_markdown(data)
    assert "Left out of the item statistics and distractor counts: m5 (100 % unparsed)" in md and "above 50 %" in md
    assert build_report(_with_refuser(), benchmark="bench", item_max_unparsed=1.0).excluded == {}


def test_flagged_items_say_how_many_are_shown_and_link_the_full_csv(tmp_path):
    many = [{**r, "question_id": f"{r['question_id']}_{k}"} for k in range(8) for r in rows()]
    data = build_report(many, benchmark="bench")
    paths = write_report(data, tmp_path / "out")
    flagged = list(csv.DictReader(paths["flagged"].open()))
    md = paths["markdown"].read_text()
    assert len(flagged) > 20 and f"the first 20 of {len(flagged)}" in md
    assert "[flagged_items.csv](flagged_items.csv)" in md and 'href="flagged_items.csv"' in paths["html"].read_text()
    assert paths["flagged"].parent == paths["markdown"].parent
    assert all(f["reason"] for f in flagged) and "non-functional distractors" in flagged[0]["reason"]


def test_charts_keep_long_rotated_labels_and_give_the_histogram_a_y_scale(tmp_path):
    from hvbench_assets.core.scoring import svg

    bars = svg.grouped_bars(["Emotion Perception", "Speech-Visual Alignment", "Overall"],
                            {"a model with a long name": [40.0, 55.0, 47.5]}, "Category averages", refs={"Random": [25, 31, 28]})
    assert ">Speech-Visual Alignment<" in bars and 'viewBox="0 0' in bars
    hist = svg.histogram({0: 4, 1: 1, 2: 1}, "Distractors", "models choosing")
    ticks = re.findall(r'id="ytick_\d+"', hist)
    assert len(ticks) >= 4  # 0..4 at least, not just the maximum


def test_a_model_missing_tasks_gets_its_means_marked_partial():
    partial = [{**r, "run_id": "bench__m6__x", "model": "m6"} for r in rows()
               if r["model"] == "m1" and r["task"] != "Human_Count"]
    md = render_markdown(build_report(rows() + partial, benchmark="bench"))
    # ER, EP avg, HC, PR avg (no task), AVSM, SVA avg, overall over 2 of the 3 tasks
    assert "| m6 | 100.0 | 100.0 | - | - | 100.0 | 100.0 | 100.0 (2/3) |" in md
    assert "| m1 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |" in md
