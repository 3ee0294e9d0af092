"""The executor every job uses: each run executes its steps in its own process, and CPU-heavy steps of all runs
share a pool sized to the machine.

A step process started with Dagster's default `spawn` imports Dagster and this package afresh (about 3 CPU
seconds, 0.2 GB) before doing any work; a per-clip run has over 40 steps (labels, checks, task questions), so
start-up cost several times the labels of a short clip, and three runs at once put six such processes on two
cores. Measured with benchmarks/clip_job.py on a 5 s clip: CPU seconds per run spawn 238, steps forked from a
preloaded forkserver 135, one process per run 35. So:

- a run executes its steps one after the other in its own process (each model is loaded once per run);
  parallelism comes from running several clips at once;
- CPU-heavy assets share the pool `cpu`, whose limit is the number of cores unless set on the instance, so
  across all runs no more of them compute at once than there are cores.

Run config can still choose `multiprocess` (the launchpad shows the choices).
"""

from __future__ import annotations

import os

import dagster as dg
# Dagster's own executor configs and constructors (dagster is pinned), so the explicit choices behave as usual
from dagster._core.definitions.executor_definition import (
    IN_PROC_CONFIG,
    MULTI_PROC_CONFIG,
    _core_in_process_executor_creation,
    _core_multiprocess_executor_creation,
    multiple_process_executor_requirements,
)
from dagster._core.events import DagsterEvent, EngineEventData
from dagster._core.execution.retries import RetryMode
from dagster._core.executor.base import Executor

CPU_POOL = "cpu"
ACTIVE = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
          dg.DagsterRunStatus.STARTED]


def machine_cores() -> int:
    """Cores this process may use (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def cpu_pool_limit(instance: dg.DagsterInstance, cores: int) -> int:
    """The `cpu` pool's limit: one set on the instance (`dagster instance concurrency set cpu N`) stays;
    otherwise (no limit, or only the instance's default_limit) it becomes the number of cores."""
    limits = {p.name: p for p in instance.event_log_storage.get_pool_limits()}
    current = limits.get(CPU_POOL)
    if current is not None and not current.from_default:
        return current.limit
    instance.event_log_storage.set_concurrency_slots(CPU_POOL, cores)
    return cores


def other_active_runs(instance: dg.DagsterInstance, run_id: str) -> int:
    runs = instance.get_run_records(dg.RunsFilter(statuses=ACTIVE), limit=50)
    return sum(r.dagster_run.run_id != run_id for r in runs)


class MachineSizedExecutor(Executor):
    """In-process execution after sizing the `cpu` pool (see the module docstring)."""

    def __init__(self, retries: RetryMode):
        self._retries = retries

    @property
    def retries(self) -> RetryMode:
        return self._retries

    def execute(self, plan_context, execution_plan):
        instance = plan_context.instance
        cores = machine_cores()
        limit = cpu_pool_limit(instance, cores) if not instance.is_ephemeral else cores
        others = 0 if instance.is_ephemeral else other_active_runs(instance, plan_context.run_id)
        yield DagsterEvent.engine_event(
            plan_context, f"Machine-sized executor: steps in this process; {cores} cores, pool '{CPU_POOL}' limit "
                          f"{limit}, {others} other run(s) queued or in progress", EngineEventData())
        delegate = _core_in_process_executor_creation({"retries": {"enabled": {}}})
        yield from delegate.execute(plan_context, execution_plan)


def _requirements(config):
    # auto needs nothing: it runs in process on an ephemeral instance
    return multiple_process_executor_requirements() if "multiprocess" in config else []


@dg.executor(
    name="machine_sized",
    config_schema=dg.Field(
        dg.Selector({"auto": dg.Field({}, description="in process, after sizing the cpu pool (default)"),
                     "multiprocess": MULTI_PROC_CONFIG, "in_process": IN_PROC_CONFIG}),
        default_value={"auto": {}},
    ),
    requirements=_requirements,
)
def machine_sized_executor(init_context: dg.InitExecutorContext) -> Executor:
    """Steps in the run's own process (default), or Dagster's in-process / multiprocess executors by config."""
    kind, config = next(iter(init_context.executor_config.items()))
    if kind == "multiprocess":
        return _core_multiprocess_executor_creation(config)
    if kind == "in_process":
        return _core_in_process_executor_creation(config)
    return MachineSizedExecutor(RetryMode.ENABLED)


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=machine_sized_executor)
