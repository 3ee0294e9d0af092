"""Shared fixtures: the real clips in ../shared/videos, a temporary warehouse, generated media."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hvbench_assets.core.warehouse import Warehouse

SHARED_VIDEOS = Path(__file__).resolve().parents[1].parent / "shared" / "videos"
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
