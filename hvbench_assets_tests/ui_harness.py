"""The Dagster UI on loopback for browser tests and the docs' screenshots: `dagster-webserver` on a
DAGSTER_HOME of its own, loading this package's definitions against a given warehouse."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from hvbench_assets_tests.review.harness import free_port

REPO = Path(__file__).resolve().parents[1]


def ui_env(home: Path, root: Path) -> dict[str, str]:
    """The environment the webserver and its code server run in: the instance in `home`, the warehouse and
    data folder under `root`, no model configured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HVBENCH_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(home), HVBENCH_DATA_DIR=str(root / "data"), HVBENCH_WAREHOUSE=str(root / "wh.duckdb"),
               HVBENCH_MODELS_FILE=str(root / "no-models.toml"), PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1",
               YOLO_OFFLINE="1")
    return env


def new_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return home


@contextlib.contextmanager
def dagster_ui(home: Path, root: Path, timeout_s: float = 240.0) -> Iterator[str]:
    """The UI's base URL once the hvbench code location has loaded; stopped afterwards."""
    port = free_port()
    log = open(home / "webserver.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "dagster_webserver", "-h", "127.0.0.1", "-p", str(port),
                             "-w", str(REPO / "workspace.yaml")],
                            cwd=REPO, env=ui_env(home, root), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    query = '{"query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus ' \
            'locationOrLoadError { __typename } } } } }"}'
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"dagster-webserver exited: {(home / 'webserver.log').read_text()[-2000:]}")
            try:
                r = httpx.post(f"{url}/graphql", content=query, headers={"content-type": "application/json"}, timeout=5)
                entries = r.json()["data"]["workspaceOrError"]["locationEntries"]
                if entries and entries[0]["loadStatus"] == "LOADED":
                    kind = entries[0]["locationOrLoadError"]["__typename"]
                    if kind != "RepositoryLocation":
                        raise RuntimeError(f"code location failed to load: {(home / 'webserver.log').read_text()[-3000:]}")
                    break
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the UI did not load in {timeout_s}s: {(home / 'webserver.log').read_text()[-2000:]}")
            time.sleep(1.0)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
