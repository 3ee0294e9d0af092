"""Paths and knobs read from the environment, with defaults that work from a fresh clone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def default_data_dir() -> Path:
    return Path(env_str("HVBENCH_DATA_DIR", str(PROJECT_ROOT / "data")))


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
