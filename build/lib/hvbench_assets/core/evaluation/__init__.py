"""Evaluation runner: letter-only prompts, frame sampling, concurrency, resume from the warehouse."""

from hvbench_assets.core.evaluation.answerers import MllmAnswerer, mllm_answerer
from hvbench_assets.core.evaluation.runner import (
           Answerer,
           EvalConfig,
           Evaluator,
           ModelMisconfigured,
           RunOutcome,
           evaluate,
           run_id_for,
)
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS

__all__ = ["EVAL_RESPONSES", "EVAL_RUNS", "Answerer", "EvalConfig", "Evaluator", "MllmAnswerer",
           "ModelMisconfigured", "RunOutcome",
           "evaluate", "mllm_answerer", "run_id_for"]
