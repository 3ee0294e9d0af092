"""Installed versions of the packages whose behaviour shapes hvbench's rows, so a run on any node records
what it ran with (constraints.txt pins them; this shows a node that drifted)."""

from __future__ import annotations

import functools
import platform
from importlib import metadata

KEY_PACKAGES = ("hvbench", "dagster", "duckdb", "duckdb-ext-ducklake", "numpy", "opencv-python-headless", "av",
                "onnxruntime", "dlib-bin", "torch", "transformers")


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """{"python": ..., package: version} for the key packages that are installed (absent ones left out)."""
    out = {"python": platform.python_version()}
    for name in KEY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def versions_line() -> str:
    """One compact line (a Dagster run tag or a metadata entry): `python=3.11.7 duckdb=1.4.4 ...`."""
    return " ".join(f"{k}={v}" for k, v in package_versions().items())
