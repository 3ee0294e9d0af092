"""Published model weights shipped inside the package (hvbench_assets/weights), each recorded in its
manifest with source repository, commit, path, licence, size and sha256. `weight_path` returns a file
only after checking it against the manifest, so a missing, truncated or altered file fails with a
message naming the file and what to do, never with a model that silently computes something else."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

WEIGHTS_DIR = Path(__file__).resolve().parents[1] / "weights"
MANIFEST = WEIGHTS_DIR / "manifest.json"


class WeightsUnavailable(RuntimeError):
    """A shipped weight file is missing or does not match its manifest entry."""


@lru_cache(maxsize=1)
def manifest() -> dict[str, dict]:
    if not MANIFEST.is_file():
        raise WeightsUnavailable(f"the weights manifest is missing at {MANIFEST}: reinstall hvbench")
    return json.loads(MANIFEST.read_text())["weights"]


def entry(name: str) -> dict:
    weights = manifest()
    if name not in weights:
        raise WeightsUnavailable(f"no shipped weights named {name!r} (known: {', '.join(sorted(weights))})")
    return weights[name]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=32)
def _verified(name: str, folder: str) -> Path:
    meta = entry(name)
    path = Path(folder) / meta["file"]
    source = f"{meta['repository']}@{meta['commit'][:10]}:{meta['path']}"
    if not path.is_file():
        raise WeightsUnavailable(f"{name} weights are missing at {path} (from {source}): reinstall hvbench")
    size = path.stat().st_size
    if size != meta["bytes"]:
        raise WeightsUnavailable(
            f"{name} weights at {path} have {size} bytes, the manifest says {meta['bytes']} (from {source}): "
            "the file is truncated or replaced; reinstall hvbench")
    digest = sha256_of(path)
    if digest != meta["sha256"]:
        raise WeightsUnavailable(
            f"{name} weights at {path} have sha256 {digest[:12]}..., the manifest says {meta['sha256'][:12]}... "
            f"(from {source}): the file was altered; reinstall hvbench")
    return path


def weight_path(name: str, folder: Path | None = None) -> Path:
    """The verified path of shipped weights `name` (checked once per process)."""
    return _verified(name, str(folder or WEIGHTS_DIR))


def provenance(name: str) -> str:
    """One line for metadata and provenance rows: what the weights are and where they come from."""
    meta = entry(name)
    return f"{meta['file']} ({meta['repository']}@{meta['commit'][:10]}, {meta['licence']}, sha256 {meta['sha256'][:12]})"
