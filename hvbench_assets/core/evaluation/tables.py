"""Warehouse tables of the evaluation stage. `model` / `backend` / `code_version` are provenance columns."""

from hvbench_assets.core.warehouse import TableSpec

EVAL_RUNS = TableSpec(
    name="eval_runs",
    key=("run_id",),
    description="One row per evaluation run (model x benchmark x sampling config); progress counts.",
    columns=(
        ("run_id", "VARCHAR"),
        ("benchmark", "VARCHAR"),
        ("benchmark_root", "VARCHAR"),
        ("benchmark_fingerprint", "VARCHAR"),
        ("config", "JSON"),  # frames / fps / max_side / audio / circular / prompt version / judge
        ("n_items", "INTEGER"),  # items x rotations asked for in this invocation
        ("n_answered", "INTEGER"),  # rows with a reply (parsed or unparsed) after this invocation
        ("n_failed", "INTEGER"),  # calls that failed (retried on the next run)
        ("load_issues", "JSON"),  # malformed benchmark lines: file, line, message
        ("status", "VARCHAR"),  # running | complete | partial | interrupted | misconfigured (wrong key or endpoint)
        ("updated_at", "TIMESTAMP"),
    ),
)

EVAL_RESPONSES = TableSpec(
    name="eval_responses",
    key=("run_id", "task", "question_id", "rotation"),
    description="Every raw reply of an evaluated model, the option parsed from it and whether it is right.",
    columns=(
        ("run_id", "VARCHAR"),
        ("benchmark", "VARCHAR"),
        ("task", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("rotation", "INTEGER"),  # circular mode: options shifted by this many places (0 = as published)
        ("item_hash", "VARCHAR"),  # content hash of the item; a changed item is asked again
        ("n_options", "INTEGER"),
        ("letters", "JSON"),
        ("options", "JSON"),  # option texts in the order asked
        ("answer", "VARCHAR"),  # right letter as asked (after rotation)
        ("answer_original", "VARCHAR"),  # right letter in the published order
        ("prompt_hash", "VARCHAR"),
        ("frames_sent", "INTEGER"),
        ("audio_sent", "BOOLEAN"),
        ("response", "VARCHAR"),  # raw reply text, untouched
        ("chosen", "VARCHAR"),  # parsed letter as asked, NULL when unparsed
        ("chosen_original", "VARCHAR"),  # the same option's letter in the published order
        ("correct", "BOOLEAN"),
        ("status", "VARCHAR"),  # parsed | unparsed | failed
        ("method", "VARCHAR"),  # extraction rule or reason (see core/scoring/extraction.py)
        ("judge_response", "VARCHAR"),
        ("call_id", "VARCHAR"),  # model_calls.id of the MLLM call
        ("tokens_in", "INTEGER"),
        ("tokens_out", "INTEGER"),
        ("latency_s", "DOUBLE"),
        ("cached", "BOOLEAN"),
        ("error", "VARCHAR"),
        ("answered_at", "TIMESTAMP"),
        ("arm", "VARCHAR"),  # full | frames | audio | text (modality arm; part of the run id)
        ("grade", "VARCHAR"),  # open items: the matcher's right | wrong | ungradable (core/scoring/open_match.py)
        ("grade_reason", "VARCHAR"),  # open items: what the matcher read
        ("judge_verdict", "VARCHAR"),  # open items: the judge's right | wrong | ungradable; NULL without a judge
    ),
)

EVAL_TASK_SCORES = TableSpec(
    name="eval_task_scores",
    key=("benchmark",),
    description="Per run and task: counts, accuracy, unparsed rate, circular accuracy, random baselines.",
    columns=(
        ("benchmark", "VARCHAR"),
        ("run_id", "VARCHAR"),
        ("label", "VARCHAR"),
        ("task", "VARCHAR"),
        ("n_items", "INTEGER"),
        ("n_correct", "INTEGER"),
        ("n_unparsed", "INTEGER"),
        ("accuracy", "DOUBLE"),
        ("unparsed_rate", "DOUBLE"),
        ("circular_accuracy", "DOUBLE"),
        ("random_expected", "DOUBLE"),  # mean over items of 1/n_options (ours)
        ("random_reference", "DOUBLE"),  # item count / total option count (reference script)
    ),
)

EVAL_ITEM_STATS = TableSpec(
    name="eval_item_stats",
    key=("benchmark",),
    description="Per item across evaluated models: difficulty, discrimination, choices, non-functional distractors.",
    columns=(
        ("benchmark", "VARCHAR"),
        ("task", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("n_models", "INTEGER"),
        ("n_options", "INTEGER"),
        ("difficulty", "DOUBLE"),
        ("discrimination", "DOUBLE"),
        ("upper_lower", "DOUBLE"),
        ("choice_counts", "JSON"),
        ("non_functional", "JSON"),
        ("entropy_bits", "DOUBLE"),
        ("entropy_norm", "DOUBLE"),
    ),
)

EVAL_DISTRACTORS = TableSpec(
    name="eval_distractors",
    key=("benchmark",),
    description="Per option of every item: which evaluated models chose it (distractor selection frequency).",
    columns=(
        ("benchmark", "VARCHAR"),
        ("task", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("letter", "VARCHAR"),  # in the published order
        ("text", "VARCHAR"),
        ("is_answer", "BOOLEAN"),
        ("n_models", "INTEGER"),  # how many models chose this option
        ("models", "JSON"),
    ),
)

EVAL_ITEM_ARMS = TableSpec(
    name="eval_item_arms",
    key=("benchmark",),
    description="Per item, when modality arms were run: models right per arm and the verdict "
                "(answerable from text, needs video, needs audio, needs both, ...).",
    columns=(
        ("benchmark", "VARCHAR"),
        ("task", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("verdict", "VARCHAR"),
        ("votes", "JSON"),  # arm -> [models right, models asked]
        ("frames_by_all", "BOOLEAN"),  # every model taking the frames arm was right
        ("audio_visual", "BOOLEAN"),  # a Speech-Visual Alignment task
    ),
)
