"""A code location for test_run_workers.py and benchmarks/run_worker_start.py: hvbench's definitions (which the
preloaded fork server imports) plus probe jobs: one reports how its run worker started,
one fails, one waits until the run is terminated."""

import os
import sys
import time

import dagster as dg

import hvbench_assets.definitions as hvbench

# a module that only hvbench's definitions import: a preloaded worker has it before its job loads
LOADED_BY_DEFINITIONS = "hvbench_assets.defs.labels.vision"
AT_IMPORT = LOADED_BY_DEFINITIONS in sys.modules  # evaluated when the run worker imports this module


@dg.op
def where_am_i(context: dg.OpExecutionContext) -> None:
    context.log_event(dg.AssetObservation(asset_key="run_worker", metadata={
        "ppid": os.getppid(), "pid": os.getpid(), "preloaded": AT_IMPORT,
        # the worker's CPU seconds and the time when its first op starts (benchmarks/run_worker_start.py)
        "cpu_s": time.process_time(), "op_started_at": time.time()}))


@dg.job
def run_worker_probe():
    where_am_i()


@dg.op
def fails() -> None:
    raise ValueError("the probe failed on purpose")


@dg.job
def run_worker_failure():
    fails()


@dg.op
def waits(context: dg.OpExecutionContext) -> None:
    context.log.info("waiting to be terminated")
    time.sleep(120)


@dg.job
def run_worker_waits():
    waits()


@dg.definitions
def defs() -> dg.Definitions:
    # all of hvbench's definitions, so a worker loads (or inherits) as much as a real run's
    return dg.Definitions.merge(hvbench.defs(), dg.Definitions(
        jobs=[run_worker_probe, run_worker_failure, run_worker_waits]))
