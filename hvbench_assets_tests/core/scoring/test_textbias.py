"""Text-bias score: generated benchmarks whose answers the texts give away, or do not."""

from __future__ import annotations

import random

import pytest

from hvbench_assets.core.scoring.textbias import item_rows, items_from_pool, manifest_section, option_features, text_bias

WORDS = ("the a person man woman child smiles walks runs talks sits stands left right red blue shirt hat jacket "
         "camera looks away toward table door window quickly slowly happy sad angry calm loud quiet").split()


def phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generated(kind: str, n_clips: int = 40, per_clip: int = 3, n_options: int = 4, seed: int = 0,
              task: str = "Emotion_Recognition") -> list[dict]:
    """`longest`: the truth is always the longest option; `balanced`: the truth is any option, drawn like the
    others; `clip_word`: every question of a clip has the same right answer text, found nowhere else."""
    rng = random.Random(seed)
    items = []
    for c in range(n_clips):
        for q in range(per_clip):
            options = [phrase(rng, rng.randint(2, 9)) for _ in range(n_options)]
            if kind == "clip_word":  # every option gets one made-up word of the same shape; only the truth's repeats
                options = [f"{o} clipword{rng.choice('abcdefghijklmnopqrstuvwxyz')}{rng.choice('cdefghijklmnopqrstuvwxyz')}"
                           for o in options]
            if kind == "longest":
                answer = max(range(n_options), key=lambda i: (len(options[i]), -i))
            else:
                answer = rng.randrange(n_options)
            if kind == "clip_word":
                options[answer] = options[answer].rsplit(" ", 1)[0] + f" clipword{chr(97 + c % 26)}{chr(97 + c // 26)}"
            items.append({"task": task, "question_id": f"c{c}q{q}", "cluster": f"clip{c}",
                          "question": f"What does the {phrase(rng, 3)} do?", "options": options,
                          "answer_index": answer})
    return items


def test_truth_always_the_longest_option_is_flagged_predictable():
    result = text_bias(generated("longest"))
    task = result.tasks["Emotion_Recognition"]
    assert task.predictable and task.accuracy > 0.9 and task.p_value < 1e-20
    assert task.chance == 0.25 and task.n_folds == 5 and task.above_chance > 0.85
    assert sum(i.hit for i in result.items) == task.n_hits
    assert all(0 <= i.p_true <= 1 for i in result.items)


def test_balanced_options_stay_near_chance():
    for seed in (0, 1):
        task = text_bias(generated("balanced", seed=seed)).tasks["Emotion_Recognition"]
        assert not task.predictable and task.p_value > 0.05
        assert abs(task.accuracy - 0.25) < 0.12


def test_folds_are_grouped_by_clip_so_a_clips_own_wording_does_not_leak():
    items = generated("clip_word")
    task = text_bias(items).tasks["Emotion_Recognition"]
    assert not task.predictable, task.note
    # the same items split without regard to clips: the clip's word is learnt and gives the answer away
    ungrouped = text_bias([{**i, "cluster": i["question_id"]} for i in items]).tasks["Emotion_Recognition"]
    assert ungrouped.predictable and ungrouped.accuracy > task.accuracy + 0.2, ungrouped.note


def test_each_item_is_scored_by_a_model_that_never_saw_its_clip():
    items = generated("longest", n_clips=10)
    a = text_bias(items)
    b = text_bias(items)
    assert [i.p_true for i in a.items] == [i.p_true for i in b.items]  # deterministic


def test_two_option_tasks_use_their_own_chance_level():
    task = text_bias(generated("longest", n_options=2, task="Audio_Visual_Speaker_Matching")).tasks[
        "Audio_Visual_Speaker_Matching"]
    assert task.chance == 0.5 and task.predictable


def test_too_few_items_are_not_scored():
    result = text_bias(generated("longest", n_clips=3))
    task = result.tasks["Emotion_Recognition"]
    assert task.accuracy is None and not task.predictable and "not scored" in task.note
    assert all(i.p_true is None for i in result.items)
    assert manifest_section(result)["per_task"]["Emotion_Recognition"]["accuracy"] is None


def test_option_features_rank_length_and_position():
    feats = option_features("where is the red door", ["red door", "a very long blue window text", "x"])
    names = ("log_chars", "log_words", "len_rank", "len_z", "longest", "shortest", "q_overlap")
    by = [dict(zip(names, f)) for f in feats]
    assert [b["len_rank"] for b in by] == [0.5, 1.0, 0.0]
    assert [b["longest"] for b in by] == [0.0, 1.0, 0.0] and by[2]["shortest"] == 1.0
    assert by[0]["q_overlap"] == pytest.approx(2 / 5)


def test_pool_rows_become_items_and_rows():
    pool = [{"task": "Human_Count", "question_id": f"q{i}", "video_id": f"v{i // 2}", "question": "How many?",
             "options": [{"letter": "A", "text": "two people"}, {"letter": "B", "text": "three"}], "answer": "A"}
            for i in range(30)]
    items = items_from_pool(pool)
    assert items[0]["cluster"] == "v0" and items[0]["answer_index"] == 0
    rows = item_rows(text_bias(items))
    assert len(rows) == 30 and all(r["hit"] and r["task_predictable"] for r in rows)


def test_report_flags_items_the_texts_give_away_and_writes_their_score(tmp_path):
    import csv

    from hvbench_assets.core.scoring.report import build_report, write_report

    items = generated("longest", n_clips=20)
    rows = []
    for model, right in (("m1", True), ("m2", False)):
        for it in items:
            answer = "ABCD"[it["answer_index"]]
            chosen = answer if right else "ABCD"[(it["answer_index"] + 1) % 4]
            rows.append({"run_id": f"b__{model}", "benchmark": "b", "model": model, "task": it["task"],
                         "question_id": it["question_id"], "rotation": 0, "n_options": 4, "letters": list("ABCD"),
                         "options": it["options"], "answer": answer, "answer_original": answer, "chosen": chosen,
                         "chosen_original": chosen, "correct": right, "status": "parsed", "method": "bare_letter"})
    bias = text_bias(items)
    data = build_report(rows, benchmark="b", text_bias=bias,
                        item_info={(i["task"], i["question_id"]): {"cluster": i["cluster"]} for i in items},
                        clustering="clusters: by clip")
    paths = write_report(data, tmp_path)
    flagged = {f["question_id"]: f for f in csv.DictReader(paths["flagged"].open())}
    hits = {i.question_id for i in bias.items if i.hit}
    assert hits and hits <= set(flagged)
    assert all("answer predictable from text" in flagged[q]["reason"] and flagged[q]["text_bias_hit"] == "1"
               and float(flagged[q]["text_bias_p_true"]) > 0.25 for q in hits)
    md = paths["markdown"].read_text()
    assert "| ER | 60 |" in md and "| yes |" in md  # the text-bias table: 60 items, predictable
    assert "20 clusters (clusters: by clip)" in md
