"""Registers the benchmark `benchmark_job` assembles as an `eval_benchmarks` partition before its first export
(the evaluation sensor only sees benchmark folders that exist)."""

import dagster as dg

from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions
from hvbench_assets.defs.evaluation.sensors import SAFE_NAME
from hvbench_assets.defs.resources import BenchmarkResource


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds HVBENCH_BENCHMARK_NAME to the eval_benchmarks partitions, so benchmark_job can run for it",
)
def benchmark_partition_sensor(context: dg.SensorEvaluationContext, benchmark: BenchmarkResource):
    name = benchmark.name
    if not SAFE_NAME.match(name):
        return dg.SkipReason(f"HVBENCH_BENCHMARK_NAME={name!r} is not a usable partition key ({SAFE_NAME.pattern})")
    if context.instance.has_dynamic_partition(eval_benchmarks_partitions.name, name):
        return dg.SkipReason(f"{name} is registered")
    return dg.SensorResult(dynamic_partitions_requests=[eval_benchmarks_partitions.build_add_request([name])])
