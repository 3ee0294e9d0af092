"""Runs the instance still shows as in progress although their process is gone; the runs of one source file.

`hvbench runs --file FILE` prints the Runs page filter that lists every run touching an inbox file (its
`hvbench/file/<key>` tag, defs/run_tags.py: batches over several files included), a link to the page with that
filter set, and the runs the local instance finds with it.

A run executed by `dagster asset materialize` (or a run worker killed by the kernel) writes no end event
when it is killed, and the default run launcher offers run monitoring no way to see that its worker died:
the run stays STARTED for ever. Every executor records its process id in an engine event at start; a run
whose process no longer exists on this machine is marked failed (reason: unexpected termination), one that
was being canceled is marked canceled.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hvbench_assets.cli.common import command, existing_warehouse, warehouse_arg

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
    from dagster import DagsterEventType

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
    from hvbench_assets.runtime.dagster_private import JobFailureData, RunFailureReason

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
    p.add_argument("--file", metavar="FILE",
                   help="an inbox file (its name, its path in the inbox, or its raw_videos key): print the Runs page "
                        "filter that lists every run touching it, and those runs")
    p.add_argument("--limit", type=int, default=20, help="runs listed with --file (newest first; default 20)")
    warehouse_arg(p)


@dataclass(frozen=True)
class FileRuns:
    raw_video_id: str
    file: str  # as the run tags name it: relative to the inbox
    tags: dict  # the run filter: tag key -> value

    @property
    def filter_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.tags.items())

    def ui_link(self, base: str) -> str:
        from urllib.parse import quote

        return f"{base.rstrip('/')}/runs?" + "&".join(
            f"q[]={quote(f'tag:{k}={v}', safe='')}" for k, v in self.tags.items())

    @property
    def graphql(self) -> str:
        tags = ", ".join(f'{{key: "{k}", value: {_json(v)}}}' for k, v in self.tags.items())
        return f"runsOrError(filter: {{tags: [{tags}]}})"


def _json(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def find_files(wh, inbox: Path, name: str) -> list[FileRuns]:
    """The registered inbox files `name` names: by raw_videos key, path in the inbox, stored path, absolute path
    or (when nothing else matches) file name alone."""
    from hvbench_assets.core.ingest.tables import RAW_VIDEOS
    from hvbench_assets.core.media.paths import resolve
    from hvbench_assets.defs.run_tags import file_filter, inbox_relative

    if not wh.has_table(RAW_VIDEOS.name):
        return []
    rows = sorted(wh.rows(RAW_VIDEOS), key=lambda r: r["raw_video_id"])
    found = [(r, inbox_relative(inbox, r["path"])) for r in rows]
    given = os.path.abspath(name)
    exact = [(r, rel) for r, rel in found if name in (r["raw_video_id"], rel, r["path"])
             or str(resolve(r["path"])) == given]
    matches = exact or [(r, rel) for r, rel in found if Path(rel).name == Path(name).name]
    return [FileRuns(r["raw_video_id"], rel, file_filter(r["raw_video_id"], rel)) for r, rel in matches]


def file_runs_lines(instance: dg.DagsterInstance, f: FileRuns, ui: str, limit: int) -> list[str]:
    import dagster as dg

    runs = instance.get_runs(dg.RunsFilter(tags=f.tags), limit=limit)
    lines = [f"{f.file} (raw_videos/{f.raw_video_id})",
             f"  Runs page: Filter -> Tag -> {next(iter(f.tags))} -> {f.tags[next(iter(f.tags))]}, i.e. the tag "
             f"filter {f.filter_text}",
             f"  link: {f.ui_link(ui)}",
             f"  GraphQL: {f.graphql}",
             f"  {len(runs)}{'+' if len(runs) == limit else ''} run(s) in this instance touch it (newest first):"]
    lines += [f"    {r.run_id}  {r.status.value:9s} {r.job_name} {_partitions(r.tags) or ''}" for r in runs]
    return lines


@command("runs", "runs the local instance shows in progress, and whether their process still exists; --file FILE: "
         "the Runs page filter for every run touching FILE", _runs_args)
def _runs(args: argparse.Namespace) -> int:
    import dagster as dg

    from hvbench_assets.core.settings import PROJECT_ROOT

    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    if args.file:
        return _file_runs(args)
    with dg.DagsterInstance.get() as instance:
        runs = in_progress_runs(instance)
        for r in runs:
            print(f"{r.run_id}  {r.status:9s} {r.job} {r.partition or ''}  {r.why}")
        print(f"{len(runs)} run(s) in progress in {os.environ['DAGSTER_HOME']}")
        if args.fail_dead:
            for r in fail_dead_runs(instance):
                print(f"marked {r.run_id} {'canceled' if r.status == 'CANCELING' else 'failed'}: {r.why}")
    return 0


def _file_runs(args: argparse.Namespace) -> int:
    import dagster as dg

    from hvbench_assets.settings_table import data_dir, raw, value

    wh = existing_warehouse(args, ": no files registered yet")
    inbox = Path(raw("HVBENCH_INBOX_DIR") or data_dir() / "inbox")
    files = find_files(wh, inbox, args.file)
    if not files:
        print(f"no registered inbox file is named {args.file!r} (`hvbench status` lists them)", file=sys.stderr)
        return 2
    with dg.DagsterInstance.get() as instance:
        for f in files:
            print("\n".join(file_runs_lines(instance, f, value("HVBENCH_DAGSTER_URL"), args.limit)))
    return 0
