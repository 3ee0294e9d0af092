"""Paths and knobs read from the environment, with defaults that work from a fresh clone."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def default_data_dir() -> Path:
    return Path(env_str("HVBENCH_DATA_DIR", str(PROJECT_ROOT / "data")))
