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

A step tagged `hvbench/process: fork` (`transcript`: pocketsphinx holds the GIL for a whole utterance, so a
thread cannot overlap it) runs in a child forked from the run's process while a core is free, overlapping the
steps the run's process keeps computing (`human_tracks`). The child inherits the imported code and the
initialized resources, so it starts in milliseconds; it logs its step's events to the instance itself (as a
multiprocess step does) and hands them to the parent through a file when it exits, so lineage, staleness, logs
and pool slots stay per step. A step that fails or whose process dies fails alone (its downstream steps are
skipped); the parent's steps go on. Steps leading to a forkable step are taken first so it can start early,
and a ready forkable step before any of them (an in-process step blocks the loop until it ends); of those,
the ones a heavy forkable step (`cpu` pool) waits for come first. A forkable
step that finds the child slot busy waits for it while the run's process computes the other ready steps (so
a cheap forked step cannot push a heavy one into the run's process); it runs in the run's process only when
nothing else is ready. Forkable steps of the `cpu` pool (L7) get the slot first, ready or waiting: a cheap
forked task step taking it first kept L7, the run's longest step, waiting for it.
While a heavy child computes, the run's process keeps the steps no heavy forkable step waits for off the child's
core (`_Cores`). A process holding an attached DuckLake catalog is not forked (ducklake.fork_safe: such a child crashed); the
step then runs in the run's process like the others.

Run config can still choose `multiprocess` (the launchpad shows the choices).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
# Dagster's own executor configs and constructors (dagster is pinned), so the explicit choices behave as usual
from dagster import DagsterEvent, Executor, deserialize_value, multiple_process_executor_requirements, serialize_value

from hvbench_assets.runtime.dagster_private import (
    IN_PROC_CONFIG,
    MULTI_PROC_CONFIG,
    ActiveExecution,
    EngineEventData,
    ExecuteRunWithPlanIterable,
    InstanceConcurrencyContext,
    PlanExecutionContextManager,
    RetryMode,
    SerializableErrorInfo,
    _core_in_process_executor_creation,
    _core_multiprocess_executor_creation,
    _trigger_hook,
    dagster_event_sequence_for_step,
    get_run_crash_explanation,
)

from hvbench_assets.core.warehouse.ducklake import fork_safe

CPU_POOL = "cpu"
FORK_TAG = "hvbench/process"  # op tag; value "fork": run the step in a forked child while a core is free
IDLE_POLL_S = 0.05  # how often a run with nothing to compute looks again (a child's exit, a freed pool slot)
ACTIVE = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
          dg.DagsterRunStatus.STARTED]


def machine_cores() -> int:
    """Cores this process may use (a container's CPU set, not the host's count; not narrowed by `_Cores`)."""
    return len(_Cores.allowed())


class _Cores:
    """The cores the run's process computes on. While heavy forked steps (`cpu` pool: L7's frame scores) run, a step
    that no heavy forkable step waits for (L2, L3, L1's verdicts, the task questions) leaves them their cores, so its
    threads (DeepFace's, x264's, DuckDB's) never slow the step the run waits for longest; a step on the way to one
    (L1 beside the forked transcript) keeps every core. Linux only: elsewhere nothing is narrowed."""

    @staticmethod
    @functools.cache
    def allowed() -> frozenset:
        """Every core this process may use, as it started (before any narrowing)."""
        if not hasattr(os, "sched_getaffinity"):
            return frozenset(range(os.cpu_count() or 1))
        return frozenset(os.sched_getaffinity(0))

    def __init__(self):
        self.now = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else self.allowed()

    def leave(self, busy: int) -> None:
        """Narrow this process (every thread) to all cores but `busy` of them, at least one; 0 restores all."""
        cores = sorted(self.allowed())
        want = frozenset(cores[busy:] or cores[-1:]) if busy else self.allowed()
        if want == self.now or not hasattr(os, "sched_setaffinity"):
            return
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), want)
            except OSError:  # a thread that just ended
                pass
        self.now = want


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
    """In-process execution after sizing the `cpu` pool, with forkable steps in forked children (see the module
    docstring). `forks` is how many children may compute at once besides the run's process (cores - 1)."""

    def __init__(self, retries: RetryMode, forks: int | None = None):
        self._retries = retries
        self._forks = forks

    @property
    def retries(self) -> RetryMode:
        return self._retries

    def execute(self, plan_context, execution_plan):
        instance = plan_context.instance
        cores = machine_cores()
        forks = max(0, cores - 1) if self._forks is None else self._forks
        limit = cpu_pool_limit(instance, cores) if not instance.is_ephemeral else cores
        others = 0 if instance.is_ephemeral else other_active_runs(instance, plan_context.run_id)
        forkable = sorted(s.key for s in execution_plan.get_steps_to_execute_in_topo_order() if _forkable(s))
        yield DagsterEvent.engine_event(
            plan_context, f"Machine-sized executor: steps in this process (pid {os.getpid()})"
                          + (f", {', '.join(forkable)} in a forked child while a core is free" if forkable and forks
                             else "")
                          + f"; {cores} cores, pool '{CPU_POOL}' limit {limit}, {others} other run(s) queued or in "
                            "progress", EngineEventData.in_process(os.getpid(), execution_plan.step_keys_to_execute))
        yield from ExecuteRunWithPlanIterable(
            execution_plan=plan_context.execution_plan,
            iterator=lambda job_context, execution_plan: self._iterate(job_context, execution_plan, forks),
            execution_context_manager=PlanExecutionContextManager(
                job=plan_context.job, retry_mode=plan_context.retry_mode, execution_plan=plan_context.execution_plan,
                run_config=plan_context.run_config, dagster_run=plan_context.dagster_run, instance=instance,
                raise_on_error=plan_context.raise_on_error, output_capture=plan_context.output_capture),
        )

    def _iterate(self, job_context, execution_plan, forks: int):
        """Dagster's in-process loop (inner_plan_execution_iterator) plus forked children for forkable steps."""
        from hvbench_assets.runtime.dagster_private import create_compute_log_file_key

        lead = _leading_steps(execution_plan)
        children: dict[str, _Child] = {}
        waiting: list = []  # forkable steps taken from the plan while the child slot was busy, heaviest first
        cores = _Cores()
        logs = job_context.instance.compute_log_manager
        with InstanceConcurrencyContext(job_context.instance, job_context.dagster_run) as concurrency, \
                execution_plan.start(retry_mode=job_context.retry_mode, instance_concurrency_context=concurrency,
                                     sort_key_fn=lambda s: -int(s.tags.get("dagster/priority", 0))
                                     - 0.5 * (s.key in lead) - 0.25 * _forkable(s)
                                     - 0.125 * (_forkable(s) and s.pool == CPU_POOL) - 0.0625 * lead.get(s.key, 0),
                                     step_dependency_config=job_context.step_dependency_config) as active:
            log_key = logs.build_log_key_for_run(job_context.run_id, create_compute_log_file_key())
            with logs.capture_logs(log_key) as log_context:
                yield DagsterEvent.capture_logs(job_context, execution_plan.step_keys_to_execute, log_key, log_context)
                try:
                    while not active.is_complete:
                        done = [k for k, c in children.items() if c.exited()]
                        for key in done:
                            yield from self._collect(job_context, active, children.pop(key))
                        if done:
                            continue  # the plan may be complete now
                        forking = forks > 0 and fork_safe()
                        slot_free = forking and len(children) < forks
                        if waiting and slot_free:
                            yield from self._fork(job_context, active, waiting.pop(0), children)
                            continue
                        step = active.get_next_step()
                        yield from active.concurrency_event_iterator(job_context)
                        if step and forking and _forkable(step):
                            if slot_free:  # nothing waits (it would have been forked above)
                                yield from self._fork(job_context, active, step, children)
                                continue
                            # the child slot is taken: the step waits for it while this process runs the
                            # others (a cheap forked step must not push a heavy one into this process)
                            waiting.append(step)
                            waiting.sort(key=_fork_order)
                            continue
                        if not step and waiting:  # nothing else to do here: the lightest waiting one runs here,
                            step = waiting.pop()  # the heavier ones keep their claim on the child slot
                        if not step:
                            # not active.sleep_til_ready(): Dagster's sleep_interval() is never positive while a
                            # pool claim is pending (min(0, ...) in interval_to_next_pending_claim_check), so it
                            # returned at once and a step waiting for a `cpu` slot spun this process at 100 %
                            time.sleep(max(IDLE_POLL_S, active.sleep_interval()))
                            continue
                        cores.leave(0 if lead.get(step.key) else sum(c.heavy for c in children.values()))
                        step_context = job_context.for_step(step, active.get_known_state())
                        events = []
                        for event in dagster_event_sequence_for_step(step_context):
                            events.append(event)
                            yield event
                            active.handle_event(event)
                        active.verify_complete(job_context, step.key)
                        for event in active.plan_events_iterator(job_context):
                            events.append(event)
                            yield event
                        yield from _trigger_hook(step_context, events)
                finally:
                    cores.leave(0)
                    for child in children.values():  # interrupted or failed: stop the children too
                        child.stop()

    @staticmethod
    def _fork(job_context, active: ActiveExecution, step, children: dict) -> "Iterator[DagsterEvent]":
        step_context = job_context.for_step(step, active.get_known_state())
        children[step.key] = _Child.fork(step_context)
        yield DagsterEvent.engine_event(
            step_context, f"Forked step {step.key} into process {children[step.key].pid}",
            EngineEventData.multiprocess(children[step.key].pid, [step.key]))

    def _collect(self, job_context, active: ActiveExecution, child: "_Child"):
        """A child has exited: its events (already stored by the child) drive the plan here, like in-process
        ones; a child that died without a step outcome fails (or retries) that step."""
        outcome = None
        for event in child.events():
            yield event
            if event.step_key == child.key:
                active.handle_event(event)  # acts on outputs and outcomes only
                if event.is_step_success or event.is_step_failure or event.is_step_up_for_retry:
                    outcome = event
        if outcome is None:  # the child died before its step's outcome was recorded
            step_context = job_context.for_step(active.get_step_by_key(child.key), active.get_known_state())
            message = get_run_crash_explanation(f"Forked child process for step {child.key}", child.exit_code)
            error = SerializableErrorInfo(message=message, stack=[], cls_name="ChildProcessCrashException")
            yield DagsterEvent.engine_event(step_context, message, EngineEventData.engine_error(error))
            outcome = self.log_failure_or_retry_event_after_error(step_context, error, active.get_known_state())
            yield outcome
            active.handle_event(outcome)
        active.verify_complete(job_context, child.key)
        yield from active.plan_events_iterator(job_context)


def _forkable(step) -> bool:
    return step.tags.get(FORK_TAG) == "fork"


def _fork_order(step) -> tuple:
    """Which waiting forkable step gets the child slot first: the `cpu` pool's (the heavy labels) before the rest."""
    return (step.pool != CPU_POOL, step.key)


def _leading_steps(plan) -> dict[str, float]:
    """Forkable steps and every step upstream of one: taken first, so a forkable step starts as early as it can.
    Each maps to the share (0-1) of the plan's heavy forkable steps (`cpu` pool: L7's frame scores, the transcript)
    at or below it, so of the ready steps those that a heavy one waits for go first (L1's verdicts once held L7 back
    1.5 s of a batch's 30); then those behind a light forkable one (L2, L3 and the voice, which L7's verdicts and so
    the speaker tasks wait for)."""
    steps = plan.get_steps_to_execute_in_topo_order()
    upstream = {s.key: {h.step_key for i in s.step_inputs for h in i.get_step_output_handle_dependencies()}
                for s in steps}

    def above(key: str) -> set[str]:
        todo, seen = [key], set()
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(upstream.get(k, ()))
        return seen

    forkable = [s for s in steps if _forkable(s)]
    heavy = [s.key for s in forkable if s.pool == CPU_POOL]
    lead = {k: 0.0 for s in forkable for k in above(s.key)}
    for key in heavy:
        for k in above(key):
            lead[k] += 1 / len(heavy)
    return lead


@dataclass
class _Child:
    """One step executing in a process forked from the run's process; its events go to `path`, one per line."""

    key: str
    pid: int
    path: Path
    heavy: bool  # a `cpu` pool step
    exit_code: int | None = None

    @classmethod
    def fork(cls, step_context) -> "_Child":
        fd, name = tempfile.mkstemp(prefix=f"hvbench-step-{step_context.step.key}-", suffix=".events")
        flush_std_streams()
        pid = os.fork()
        if pid == 0:  # the child: run the step, write its events, and leave without the parent's clean-up
            code = 0
            try:
                die_with_parent()
                _Cores().leave(0)  # forked while the run's process was narrowed: the step may use every core
                _FORKED_STEP[0] = step_context.step.key
                with os.fdopen(fd, "w") as out:
                    events = []
                    for event in dagster_event_sequence_for_step(step_context):
                        events.append(event)
                        out.write(serialize_value(event) + "\n")
                        out.flush()
                    for event in _trigger_hook(step_context, events):
                        out.write(serialize_value(event) + "\n")
            except BaseException:  # noqa: BLE001 - the parent turns a missing outcome into a step failure
                code = 1
                traceback.print_exc()
            finally:
                flush_std_streams()
                os._exit(code)
        os.close(fd)
        return cls(step_context.step.key, pid, Path(name), step_context.step.pool == CPU_POOL)

    def exited(self) -> bool:
        if self.exit_code is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its events file tells whether the step finished
                self.exit_code = -1
                return True
            if pid:
                self.exit_code = os.waitstatus_to_exitcode(status)
        return self.exit_code is not None

    def events(self) -> list[DagsterEvent]:
        try:
            lines = self.path.read_text().splitlines()
        finally:
            self.path.unlink(missing_ok=True)
        out = []
        for line in lines:
            try:
                out.append(deserialize_value(line, DagsterEvent))
            except Exception:  # noqa: BLE001 - a line cut short by a crash: the step then has no outcome
                break
        return out

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM (the step sees an interrupt and records it), then SIGKILL after `grace_s`."""
        if self.exited():
            self.path.unlink(missing_ok=True)
            return
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.time() + grace_s
        while not self.exited() and time.time() < deadline:
            time.sleep(0.05)
        if not self.exited():
            os.kill(self.pid, signal.SIGKILL)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        self.path.unlink(missing_ok=True)


_FORKED_STEP: list[str | None] = [None]  # set in a step's forked child: the step it runs


def forked_step() -> str | None:
    """The step this process was forked to run beside the run's process (None in the run's own process)."""
    return _FORKED_STEP[0]


def flush_std_streams() -> None:
    """Before a fork (the child would print the parent's buffered output again) and before a child's os._exit."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: nothing to keep
            pass


def die_with_parent() -> None:
    """Linux: the child gets SIGTERM when the run's process dies (a killed run worker leaves no step running)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


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
