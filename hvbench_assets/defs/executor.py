"""The executor every job uses, sized to the machine at run start.

A step process started with Dagster's default `spawn` imports Dagster and this package afresh (about 3 CPU
seconds, 0.2 GB) before doing any work; a per-clip run has about 14 steps, so start-up cost more than the labels
of a short clip, and three runs at once put six such processes on two cores. So:

- a run that has the machine to itself (no other run queued or in progress) runs its independent steps in
  parallel, one process per step forked from a server that imported the definitions once (`forkserver`), at most
  one per core;
- a run among others (a backfill, a clip_sensor tick with many clips) executes its steps in its own process, one
  after the other: the other runs use the other cores, and nothing is imported twice;
- CPU-heavy assets share the pool `cpu`, whose limit is the number of cores unless set on the instance, so
  across all runs no more of them compute at once than there are cores.

Run config can still force `in_process` or `multiprocess` (the launchpad shows the three choices).
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
# imported once by the forkserver; step processes forked from it start without importing anything
PRELOAD = ["hvbench_assets.definitions", "hvbench_assets.defs.ingest.assets", "hvbench_assets.defs.labels.vision",
           "hvbench_assets.defs.labels.audio", "hvbench_assets.defs.labels.speakers"]


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


def forkserver_config(cores: int) -> dict:
    return {"max_concurrent": cores, "retries": {"enabled": {}},
            "start_method": {"forkserver": {"preload_modules": PRELOAD}}}


class MachineSizedExecutor(Executor):
    """Chooses in-process or forkserver execution when the run starts (see the module docstring)."""

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
        parallel = (not instance.is_ephemeral and cores > 1 and others == 0
                    and len(execution_plan.step_keys_to_execute) > 1)
        how = (f"{cores} cores, {others} other run(s) queued or in progress, pool '{CPU_POOL}' limit {limit}: "
               + (f"steps in parallel in forked processes (at most {cores})" if parallel
                  else "steps one after the other in this process"))
        yield DagsterEvent.engine_event(plan_context, f"Machine-sized executor: {how}", EngineEventData())
        if parallel:
            delegate = _core_multiprocess_executor_creation(forkserver_config(cores))
        else:
            delegate = _core_in_process_executor_creation({"retries": {"enabled": {}}})
        yield from delegate.execute(plan_context, execution_plan)


def _requirements(config):
    # auto needs nothing: it runs in process on an ephemeral instance
    return multiple_process_executor_requirements() if "multiprocess" in config else []


@dg.executor(
    name="machine_sized",
    config_schema=dg.Field(
        dg.Selector({"auto": dg.Field({}, description="choose at run start (default)"),
                     "multiprocess": MULTI_PROC_CONFIG, "in_process": IN_PROC_CONFIG}),
        default_value={"auto": {}},
    ),
    requirements=_requirements,
)
def machine_sized_executor(init_context: dg.InitExecutorContext) -> Executor:
    """Steps in parallel processes when the run is alone on the machine, in the run's own process otherwise."""
    kind, config = next(iter(init_context.executor_config.items()))
    if kind == "multiprocess":
        return _core_multiprocess_executor_creation(config)
    if kind == "in_process":
        return _core_in_process_executor_creation(config)
    return MachineSizedExecutor(RetryMode.ENABLED)


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=machine_sized_executor)
