"""Runs the instance still shows as in progress although their process is gone.

A run executed by `dagster asset materialize` (or a run worker killed by the kernel) writes no end event
when it is killed, and the default run launcher offers run monitoring no way to see that its worker died:
the run stays STARTED for ever. Every executor records its process id in an engine event at start; a run
whose process no longer exists on this machine is marked failed (reason: unexpected termination), one that
was being canceled is marked canceled.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hvbench_assets.cli.common import command

if TYPE_CHECKING:  # Dagster is imported when the command runs: `hvbench --help` stays fast
    import dagster as dg


@dataclass(frozen=True)
class RunProcess:
    run_id: str
    status: str
    job: str
    partition: str | None
    pid: int | None
    alive: bool | None  # None: no process id recorded (the run never reached its executor)
    why: str


def _recorded_pid(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """The first process id an executor recorded for the run, with the time of that event."""
    from dagster._core.events import DagsterEventType

    for rec in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
        data = rec.dagster_event.engine_event_data if rec.dagster_event else None
        pid = data.metadata.get("pid") if data and data.metadata else None
        if pid is not None:
            try:
                return int(pid.value if hasattr(pid, "value") else pid), rec.timestamp
            except (TypeError, ValueError):
                continue
    return None


def _process_start(pid: int) -> float | None:
    """Start time (epoch seconds) of a live process, from /proc; None where /proc is not available."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime"))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, StopIteration, ValueError):
        return None


def _alive(pid: int, recorded_at: float) -> tuple[bool, str]:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, f"process {pid} is gone"
    except PermissionError:
        pass  # exists, owned by someone else
    started = _process_start(pid)
    if started is not None and started > recorded_at + 2:  # the number was given to a newer process
        return False, f"process {pid} is gone (the id now belongs to a process started later)"
    return True, f"process {pid} is running"


def _partitions(tags) -> str | None:
    """The run's partition, or `first...last` for a run over a key range (a batch of clips)."""
    start = tags.get("dagster/asset_partition_range_start")
    if start is not None and "dagster/partition" not in tags:
        return f"{start}...{tags.get('dagster/asset_partition_range_end')}"
    return tags.get("dagster/partition")


def in_progress_runs(instance: dg.DagsterInstance) -> list[RunProcess]:
    import dagster as dg

    in_progress = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
    out = []
    for rec in instance.get_run_records(filters=dg.RunsFilter(statuses=in_progress)):
        run = rec.dagster_run
        found = _recorded_pid(instance, run.run_id)
        if found is None:
            alive, pid, why = None, None, "no process id recorded yet"
        else:
            pid = found[0]
            alive, why = _alive(*found)
        out.append(RunProcess(run.run_id, run.status.value, run.job_name, _partitions(run.tags), pid, alive, why))
    return out


def fail_dead_runs(instance: dg.DagsterInstance) -> list[RunProcess]:
    """Mark every in-progress run whose process is gone as failed (canceled if it was being canceled)."""
    import dagster as dg
    from dagster._core.events import JobFailureData, RunFailureReason

    dead = [r for r in in_progress_runs(instance) if r.alive is False]
    for r in dead:
        run = instance.get_run_by_id(r.run_id)
        if run is None or run.is_finished:
            continue
        message = f"{r.why}: the run was killed without recording its end (marked by `hvbench runs --fail-dead`)"
        if run.status == dg.DagsterRunStatus.CANCELING:
            instance.report_run_canceled(run, message=message)
        else:
            instance.report_run_failed(run, message=message, job_failure_data=JobFailureData(
                error=None, failure_reason=RunFailureReason.UNEXPECTED_TERMINATION))
    return dead


# -- the command --------------------------------------------------------------------------------------
def _runs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-dead", action="store_true",
                   help="mark runs whose process is gone (killed `dagster asset materialize`, a dead worker) as failed")


@command("runs", "runs the local instance shows in progress, and whether their process still exists", _runs_args)
def _runs(args: argparse.Namespace) -> int:
    import dagster as dg

    from hvbench_assets.core.settings import PROJECT_ROOT

    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    with dg.DagsterInstance.get() as instance:
        runs = in_progress_runs(instance)
        for r in runs:
            print(f"{r.run_id}  {r.status:9s} {r.job} {r.partition or ''}  {r.why}")
        print(f"{len(runs)} run(s) in progress in {os.environ['DAGSTER_HOME']}")
        if args.fail_dead:
            for r in fail_dead_runs(instance):
                print(f"marked {r.run_id} {'canceled' if r.status == 'CANCELING' else 'failed'}: {r.why}")
    return 0
