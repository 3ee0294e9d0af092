"""The review app on real task-layer questions: two shared clips in one warehouse, the server started with
`hvbench review` in a subprocess (127.0.0.1 only), and the system chromium driven by Playwright."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hvbench_assets.core.curation.state import is_question
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.conftest import SHARED_VIDEOS
from hvbench_assets_tests.real_labels import DUO, labelled

CHROMIUM = Path("/usr/bin/chromium")


def merge_warehouse(dst: Path, src: Path) -> None:
    """Copy every table of `src` into `dst` (different clips, so rows never collide)."""
    with Warehouse(dst).connect() as con:
        con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
        try:
            names = [r[0] for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src'").fetchall()]
            have = {r[0] for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()").fetchall()}
            for t in names:
                if t in have:
                    con.execute(f'INSERT INTO main."{t}" BY NAME SELECT * FROM src."{t}"')
                else:
                    con.execute(f'CREATE TABLE main."{t}" AS SELECT * FROM src."{t}"')
        finally:
            con.execute("DETACH src")


def two_clip_root(tmp_path_factory) -> Path:
    """duo (real_labels.DUO: ASD, AVAD questions; TSA waits for an action annotation) + fpg (HC waits for a count),
    tasks built."""
    root = labelled(tmp_path_factory, DUO, "duo")
    materialize(root, "duo", TASK_ASSETS)
    other = labelled(tmp_path_factory, "five_people_grid.mp4", "fpg")
    materialize(other, "fpg", TASK_ASSETS)
    merge_warehouse(root / "wh.duckdb", other / "wh.duckdb")
    if (other / "data").exists():
        shutil.copytree(other / "data", root / "data", dirs_exist_ok=True)
    return root


def clone_questions(wh: Warehouse, total: int) -> None:
    """Copies of the real reviewable questions under new ids until the queue holds `total`."""
    real = [q for q in wh.rows(QUESTIONS) if is_question(q)]
    for n in range(total - len(real)):
        src = real[n % len(real)]["question_id"]
        wh.execute('INSERT INTO questions SELECT * REPLACE (? AS question_id) FROM questions WHERE question_id = ?',
                   [f"q{0xabc000000000000 + n:015x}", src])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def review_server(root: Path, *extra: str, exclude: str = "none", media_roots: tuple[Path, ...] = ()):
    """`hvbench review` on 127.0.0.1:<free port> for the warehouse under `root`; yields its base URL.
    Videos may lie in root/data, the shared clips folder and `media_roots`."""
    port = free_port()
    env = {**os.environ, "HVBENCH_DATA_DIR": str(root / "data"), "HVBENCH_REVIEW_EXCLUDE": exclude,
           "HVBENCH_ALLOWED_ROOTS": os.pathsep.join(map(str, (SHARED_VIDEOS, *media_roots))),
           "HVBENCH_DAGSTER_URL": "http://127.0.0.1:3999"}
    log = open(root / f"review-{port}.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "hvbench_assets.cli", "review", "--warehouse", str(root / "wh.duckdb"),
                             "--port", str(port), *extra], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(url + "/static/review.css", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"review server did not start: {(root / f'review-{port}.log').read_text()}")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def chromium_or_skip() -> Path:
    """The system chromium; its absence skips (set-up installs it as root), except under CI where it fails."""
    msg = None
    if not CHROMIUM.exists():
        msg = "chromium is not installed (scripts/setup.sh installs Debian's chromium when run as root)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            msg = "playwright is not installed (pip install -e '.[test]')"
    if msg:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return CHROMIUM


# -- the review page in a browser: which question shows, waiting for the next, the key of an option --------------
def current_qid(page) -> str:
    return page.get_attribute("#qlink", "href").rsplit("/", 1)[-1]


def wait_after(page, old_qid: str) -> None:
    """Until the page shows another question than `old_qid`, or says the queue is empty."""
    page.wait_for_function(
        "(old) => !document.getElementById('empty').hidden || !document.getElementById('qlink').href.endsWith(old)",
        arg=old_qid)


def option_key(page, letter: str) -> str:
    """The digit key of option `letter` in the order this reviewer sees the options."""
    letters = page.eval_on_selector_all("#options li", "els => els.map(e => e.dataset.letter)")
    return str(letters.index(letter) + 1)


SHOWN = "() => !document.getElementById('item').hidden || !document.getElementById('empty').hidden"


@contextlib.contextmanager
def app_page(root: Path, path: str, reviewer: str = "kim", media_roots: tuple[Path, ...] = ()):
    """`hvbench review` on the warehouse under `root`, in the system chromium, signed in as `reviewer` with `path`
    open and its first item (or its empty message) shown: yields (page, the page's JS errors)."""
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with review_server(root, media_roots=media_roots) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            page = browser.new_context().new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url + "/")
            page.fill("#name", reviewer)
            page.keyboard.press("Enter")
            page.wait_for_selector("text=Review queue")
            page.goto(url + path)
            page.wait_for_function(SHOWN)
            yield page, errors
        finally:
            browser.close()


@contextlib.contextmanager
def review_page(two_clips: Path, two_clips_built: Path, queue: int, reviewer: str = "kim"):
    """The review app on `queue` real questions (cloned under new ids), in the system chromium, signed in as
    `reviewer` with the review page's first item shown: yields (page, questions by id, the page's JS errors)."""
    wh = Warehouse(two_clips / "wh.duckdb")
    clone_questions(wh, queue)
    by_id = {q["question_id"]: q for q in wh.rows(QUESTIONS)}
    with app_page(two_clips, "/review", reviewer, media_roots=(two_clips_built / "data",)) as (page, errors):
        yield page, by_id, errors
