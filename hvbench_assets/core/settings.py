"""The project root, the data root core resolves stored paths against, and the Dagster instance seed.

Core reads no environment: the data root comes from a source the package installs at import
(hvbench_assets/__init__.py: the HVBENCH_DATA_DIR setting of hvbench_assets/settings_table.py), read at each
call so a process that changes the setting (tests, `hvbench demo`) is followed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from os import PathLike
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

_data_root_source: Callable[[], str | PathLike] = lambda: PROJECT_ROOT / "data"  # noqa: E731


def set_data_root_source(source: Callable[[], str | PathLike]) -> None:
    global _data_root_source
    _data_root_source = source


def default_data_dir() -> Path:
    """The data root of this process, as its source gives it (links not resolved)."""
    return Path(_data_root_source())


def seed_dagster_home(home: Path) -> bool:
    """Gives a new DAGSTER_HOME (no dagster.yaml and no instance yet) the project's instance settings (run queue,
    pools, run retries, sensor threads): Dagster's defaults would start 10 runs at once on any machine. A folder
    that already holds an instance or a dagster.yaml is left as it is. True when it was seeded."""
    home.mkdir(parents=True, exist_ok=True)
    ours = PROJECT_ROOT / "dagster_home" / "dagster.yaml"
    if (home / "dagster.yaml").exists() or (home / "storage").exists() or not ours.exists():
        return False
    shutil.copyfile(ours, home / "dagster.yaml")
    return True
