"""Model files that ship inside installed packages, found without importing those packages
(face_recognition_models' __init__ needs pkg_resources, silero_vad's imports torchaudio)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


class PackageDataMissing(RuntimeError):
    pass


def package_file(package: str, *parts: str, what: str, install: str,
                 error: type[Exception] = PackageDataMissing) -> Path:
    """Path of `parts` inside `package`; raises `error` naming what is missing and how to install it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise error(f"{install} is not installed: pip install {install} (it ships {what})")
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)
    if not path.exists():
        raise error(f"{what} is missing at {path} (reinstall {install})")
    return path
