"""Real code servers for tests and benchmarks, on loopback: `serve` starts one and writes a workspace of it;
`code_server` serves run_worker_probe.py with `dagster api grpc` and `launch` runs its jobs through it (Dagster's
DefaultRunLauncher -> StartRun)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[2]  # the project folder


def serve(args: list[str], workspace: Path, location: str, env: dict | None = None, log=None,
          timeout_s: float = 180) -> subprocess.Popen:
    """`dagster <args> --host 127.0.0.1 --port <free port>` in its own session (its process group holds its fork
    server and run workers), once it answers; `workspace` is written to point at it as code location `location`."""
    from hvbench_assets.runtime.dagster_private import DagsterGrpcClient

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "dagster", *args, "--host", "127.0.0.1", "--port", str(port)],
                              env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT if log else None,
                              start_new_session=True)
    client, deadline = DagsterGrpcClient(port=port, host="127.0.0.1"), time.time() + timeout_s
    while True:
        try:
            client.ping("")
            break
        except Exception:  # noqa: BLE001 - not listening yet
            if server.poll() is not None or time.time() > deadline:
                stop(server)
                raise RuntimeError(f"the code server `dagster {' '.join(args)}` did not start") from None
            time.sleep(0.2)
    workspace.write_text(f"load_from:\n  - grpc_server:\n      host: 127.0.0.1\n      port: {port}\n"
                         f"      location_name: {location}\n")
    return server


def stop(server: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, SIGKILL when it is still there after 30 s."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    except ProcessLookupError:
        pass


OUR_INSTANCE = "instance_class:\n  module: hvbench_assets.runtime.instance\n  class: HvbenchInstance\n"


@contextmanager
def code_server(home: Path, mode: str | None, data_dir: Path | None = None, ours: bool = True, proxy: bool = False):
    """`dagster api grpc` serving run_worker_probe.py (HVBENCH_RUN_WORKERS=`mode`, unset: the default), and a
    workspace of it on the instance at `home`, whose dagster.yaml gets the project's instance class unless `ours`
    is False (Dagster's own: no preloaded run workers); hvbench's data folder is `data_dir` (default: beside `home`).
    `proxy`: `dagster code-server start` instead, as `dagster dev` serves a code location (a proxy whose own
    `dagster api grpc` child serves the runs)."""
    from hvbench_assets.runtime.dagster_private import WorkspaceFileTarget, WorkspaceProcessContext

    config = home / "dagster.yaml"
    text = config.read_text() if config.exists() else ""
    if ours and "instance_class" not in text:
        config.write_text(text + OUR_INSTANCE)

    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(ROOT),
           "HVBENCH_DATA_DIR": str(data_dir or home.parent / "data")}
    env.pop("HVBENCH_RUN_WORKERS", None)
    if mode:
        env["HVBENCH_RUN_WORKERS"] = mode
    workspace = home / "workspace.yaml"
    command = (["code-server", "start", "-m", "hvbench_assets.testkit.run_worker_probe", "--location-name", "probe"]
               if proxy else ["api", "grpc", "--module-name", "hvbench_assets.testkit.run_worker_probe"])
    server = serve(command, workspace, "probe", env)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance, \
                WorkspaceProcessContext(instance, WorkspaceFileTarget([str(workspace)])) as context:
            yield server.pid, instance, context
    finally:
        stop(server)


def launch(instance, context, job: str = "run_worker_probe", until=(dg.DagsterRunStatus.SUCCESS,
                                                                    dg.DagsterRunStatus.FAILURE)) -> str:
    """Launches a run of `job` through the code server; returns its id once its status is one of `until`."""
    from hvbench_assets.runtime.dagster_private import _create_run

    request = context.create_request_context()
    location = request.get_code_location("probe")
    repo = next(iter(location.get_repositories().values()))
    run = _create_run(instance=instance, code_location=location, remote_repo=repo, remote_job=repo.get_full_job(job),
                      run_config={}, tags={}, op_selection=None, run_id=None)
    instance.launch_run(run.run_id, request)
    wait_for_status(instance, run.run_id, until)
    return run.run_id


def wait_for_status(instance, run_id: str, until, timeout_s: float = 120) -> dg.DagsterRunStatus:
    deadline = time.time() + timeout_s
    while (status := instance.get_run_by_id(run_id).status) not in until:
        if time.time() > deadline:
            raise TimeoutError(f"run {run_id} still {status} after {timeout_s:.0f} s")
        time.sleep(0.2)
    return status


def launch_probe(instance, context) -> dict:
    """One run of the probe job launched through the code server; its worker's report, plus `start_s`: from the
    launch to the op's start."""
    launched = time.time()
    run_id = launch(instance, context)
    if instance.get_run_by_id(run_id).status != dg.DagsterRunStatus.SUCCESS:
        raise RuntimeError(f"the probe run {run_id} failed")
    record = instance.fetch_observations(dg.AssetKey("run_worker"), limit=1).records[0]
    report = {k: v.value for k, v in record.asset_observation.metadata.items()}
    return {**report, "start_s": report["op_started_at"] - launched}
