"""The Dagster UI on loopback for browser tests and the docs' screenshots: `dagster-webserver` on a
DAGSTER_HOME of its own, loading this package's definitions against a given warehouse; what every page test does
(the welcome dialog skipped, a picture read back from the page, a screenshot for the docs)."""

from __future__ import annotations

import base64
import contextlib
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from hvbench_assets import settings_table
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


def dismiss_welcome(page) -> None:
    """A new instance greets with a newsletter dialog a second after a page opens (Dagster's CommunityNux). Keys typed
    meanwhile go to it and no locator handler runs for typing, so the dialog is marked dismissed in the browser's
    storage before any page loads (its own `communityNux` key); Playwright still skips it should it show up."""
    page.add_init_script("window.localStorage.setItem('communityNux', JSON.stringify('1'))")
    page.add_locator_handler(page.get_by_role("button", name="Skip"), lambda skip: skip.click())


def shown_image(page, alt: str, timeout_ms: int = 30_000):
    """The <img alt=`alt`> on the page once loaded, and its picture decoded from its data: URI (a PIL image)."""
    from PIL import Image

    img = page.wait_for_selector(f'img[alt="{alt}"]', timeout=timeout_ms)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img, timeout=timeout_ms)
    src = img.get_attribute("src")
    assert src.startswith("data:image/"), src[:40]
    return img, Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))


def screenshot(page, name: str, full_page: bool = False) -> None:
    """With HVBENCH_UI_SCREENSHOT (a folder, e.g. docs/img), the page as `<name>.png` there: for the docs' pictures
    and for debugging."""
    folder = settings_table.raw("HVBENCH_UI_SCREENSHOT")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=full_page)
