"""Shipped weights: every manifest entry is present with its recorded size and sha256, and an altered or
missing file fails with a message naming the file."""

from __future__ import annotations

import shutil

import pytest

from hvbench_assets.core import published_weights as pw


@pytest.mark.parametrize("name", sorted(pw.manifest()))
def test_every_shipped_weight_matches_its_manifest(name):
    meta = pw.entry(name)
    for field in ("file", "repository", "commit", "path", "licence", "bytes", "sha256", "expects"):
        assert meta.get(field), f"{name}: manifest field {field} is empty"
    assert meta["licence"] in ("MIT", "Apache-2.0", "BSD-3-Clause")
    path = pw.weight_path(name)
    assert path.stat().st_size == meta["bytes"]
    assert name in pw.manifest() and meta["sha256"][:12] in pw.provenance(name)


def test_an_altered_weight_file_is_refused_with_its_name(tmp_path):
    name = "yolox_nano"
    copy = tmp_path / pw.entry(name)["file"]
    shutil.copyfile(pw.weight_path(name), copy)
    data = bytearray(copy.read_bytes())
    data[1000] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(pw.WeightsUnavailable, match=r"yolox_nano weights at .*altered"):
        pw.weight_path(name, tmp_path)


def test_a_truncated_or_missing_weight_file_is_refused(tmp_path):
    name = "voice_gender"
    (tmp_path / pw.entry(name)["file"]).write_bytes(b"\0" * 10)
    with pytest.raises(pw.WeightsUnavailable, match="truncated or replaced"):
        pw.weight_path(name, tmp_path)
    with pytest.raises(pw.WeightsUnavailable, match="missing"):
        pw.weight_path("face_age", tmp_path)
    with pytest.raises(pw.WeightsUnavailable, match="no shipped weights named"):
        pw.weight_path("nope")


def test_pip_install_carries_every_shipped_file():
    """Every manifest file matches the package-data patterns of pyproject.toml (else a wheel lacks it)."""
    import fnmatch
    import tomllib

    project = tomllib.loads((pw.WEIGHTS_DIR.parents[1] / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["hvbench_assets.weights"]
    for name, meta in pw.manifest().items():
        assert any(fnmatch.fnmatch(meta["file"], p) for p in patterns), f"{name}: {meta['file']} is not package data"
    assert "manifest.json" in patterns
