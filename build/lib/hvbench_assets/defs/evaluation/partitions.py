"""Evaluation runs are partitioned by benchmark x model; the report by benchmark."""

import dagster as dg

eval_benchmarks_partitions = dg.DynamicPartitionsDefinition(name="eval_benchmarks")
eval_models_partitions = dg.DynamicPartitionsDefinition(name="eval_models")
eval_partitions = dg.MultiPartitionsDefinition({"benchmark": eval_benchmarks_partitions, "model": eval_models_partitions})
