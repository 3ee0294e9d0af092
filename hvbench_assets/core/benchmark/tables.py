"""Warehouse tables of the benchmark stage: the pool, every blind (text-only) answer, the leakage verdict
per question, and what each export holds. Every table is keyed by `benchmark` (the benchmark name), so a
materialization replaces one benchmark's rows as a unit and several benchmarks can sit side by side."""

from __future__ import annotations

from hvbench_assets.core.warehouse import TableSpec

QUESTION_POOL = TableSpec(
    "question_pool",
    (
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("abbrev", "VARCHAR"),
        ("review_state", "VARCHAR"),  # reviewed_questions.state (accepted | corrected | not_reviewed | ...)
        ("stratum", "VARCHAR"),  # HC: 3-5 | 6-8 | 9+; ER: positive | neutral | negative; else null
        ("target", "VARCHAR"),  # the (task, clip, target) identity one question stands for
        ("selected", "BOOLEAN"),
        ("reason", "VARCHAR"),  # why it was left out (null when selected)
        ("question", "VARCHAR"),
        ("options", "JSON"),  # after review corrections: [{"letter", "text", "origin"}]
        ("answer", "VARCHAR"),
        ("answer_text", "VARCHAR"),
        ("video_path", "VARCHAR"),
        ("content_hash", "VARCHAR"),
    ),
    key=("benchmark",),
    description="Every question of every clip, and whether the balanced pool took it (and why not)",
)

BLIND_ANSWERS = TableSpec(
    "blind_answers",
    (
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),  # the blind model is the provenance column `model` (registry name)
        ("rotation", "INTEGER"),  # options shifted by this many places
        ("options", "JSON"),  # option texts in the order asked
        ("answer", "VARCHAR"),  # right letter as asked
        ("chosen", "VARCHAR"),  # parsed letter as asked (null when unparsed or failed)
        ("correct", "BOOLEAN"),
        ("status", "VARCHAR"),  # parsed | unparsed | failed
        ("method", "VARCHAR"),  # extraction rule, or the error
        ("response", "VARCHAR"),
        ("call_id", "VARCHAR"),  # model_calls.id
        ("round", "INTEGER"),  # 0: the first blind test; k: after repair round k (core/benchmark/repair.py)
    ),
    key=("benchmark",),
    description="Every text-only answer of every blind model to every pooled question, per option rotation",
)

LEAKAGE_VERDICTS = TableSpec(
    "leakage_verdicts",
    (
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("n_options", "INTEGER"),
        ("n_answers", "INTEGER"),  # parsed blind answers (unparsed count as wrong, failed are left out)
        ("n_correct", "INTEGER"),
        ("n_failed", "INTEGER"),
        ("share", "DOUBLE"),
        ("chance", "DOUBLE"),
        ("p_value", "DOUBLE"),  # one-sided binomial test of n_correct against chance
        ("removed", "BOOLEAN"),
        ("reason", "VARCHAR"),
        ("repair_round", "INTEGER"),  # the repair round whose options passed (null: not repaired)
        ("repaired_options", "JSON"),  # the options after that round (the export uses them)
    ),
    key=("benchmark",),
    description="Per pooled question: blind accuracy, binomial p-value against chance, and whether it was removed",
)

TEXT_BIAS = TableSpec(
    "text_bias",
    (
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("n_options", "INTEGER"),
        ("p_true", "DOUBLE"),  # held-out probability of the true option from the texts alone (null: task not scored)
        ("predicted_index", "INTEGER"),  # option the text classifier picks (0 = A)
        ("hit", "BOOLEAN"),
        ("task_predictable", "BOOLEAN"),  # the task's hits are above chance (binomial p < alpha)
    ),
    key=("benchmark",),
    description="Per pooled question: how well its own texts give the answer away (core/scoring/textbias.py, "
                "no model call)",
)

EXPORT_ITEMS = TableSpec(
    "export_items",
    (
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("folder", "VARCHAR"),
        ("jsonl", "VARCHAR"),  # task file the item is in
        ("video", "VARCHAR"),  # `Video` as written (relative to the folder)
        ("answer", "VARCHAR"),  # the assembled letter (letters balanced per task)
        ("review_state", "VARCHAR"),
        ("leakage", "VARCHAR"),  # kept (p, share) | not_tested
        ("stored_answer", "VARCHAR"),  # the letter in the stored (reviewed) question
        ("letter_order", "JSON"),  # stored letters in exported order: letter_order[i] is now option A, B, ...
    ),
    key=("benchmark",),
    description="The items of the current export of each benchmark and where they are",
)

BENCHMARK_TABLES = (QUESTION_POOL, BLIND_ANSWERS, LEAKAGE_VERDICTS, TEXT_BIAS, EXPORT_ITEMS)

LEAKAGE_REPAIRS = TableSpec(
    name="leakage_repairs",
    columns=(
        ("benchmark", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("round", "INTEGER"),  # 1..HVBENCH_LEAKAGE_REPAIR_ROUNDS
        ("step", "VARCHAR"),  # perturbation (the writer's edit) | check (option checks) | blind (the re-test)
        ("status", "VARCHAR"),  # ok | failed | kept | removed
        ("call_id", "VARCHAR"),  # model_calls.id of the writer's call (perturbation rows)
        ("payload", "JSON"),  # feedback and distractors | check problems | blind counts and verdict
    ),
    key=("benchmark",),
    description="Every round of repairing a blind-answered question: the writer's new distractors with the "
                "blind picks as feedback, the option checks, the blind re-test",
)
