"""Adds `eval_benchmarks` keys for benchmark folders and `eval_models` keys for the active models."""

import re

import dagster as dg

from hvbench_assets.core.mllm import ModelNotConfigured
from hvbench_assets.defs.evaluation.partitions import (
    eval_benchmarks_partitions,
    eval_models_partitions,
)
from hvbench_assets.defs.resources import EvaluationResource, MllmResource, SettingsResource

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Registers benchmark folders and active models as evaluation partitions (no runs requested)",
)
def eval_partitions_sensor(context: dg.SensorEvaluationContext, settings: SettingsResource,
                           evaluation: EvaluationResource, mllm: MllmResource):
    benchmarks = sorted(evaluation.roots(settings.data_dir))
    try:
        models = [m.name for m in mllm.registry().active()]
    except (ModelNotConfigured, ValueError, OSError) as exc:
        context.log.info(f"no active models: {exc}")
        models = []
    requests = []
    for part, wanted in ((eval_benchmarks_partitions, benchmarks), (eval_models_partitions, models)):
        existing = set(context.instance.get_dynamic_partitions(part.name))
        unsafe = [k for k in wanted if not SAFE_NAME.match(k)]
        for k in unsafe:  # '|' or ',' would break the benchmark x model keys, '/' the report paths
            context.log.warning(f"{part.name}: {k!r} is not a usable partition key (allowed: {SAFE_NAME.pattern}); rename it")
        new = [k for k in wanted if k not in existing and k not in unsafe]
        if new:
            requests.append(part.build_add_request(new))
    if not requests:
        return dg.SensorResult(skip_reason="no new benchmarks or models")
    return dg.SensorResult(dynamic_partitions_requests=requests)
