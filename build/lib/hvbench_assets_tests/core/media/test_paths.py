"""Stored media paths: relative to the data root, absolute ones (old warehouses, outside folders) read as is."""

import logging
import os

from hvbench_assets.core.media.paths import data_root, resolve, stored_columns, to_stored


def test_a_file_under_the_data_root_is_stored_relative_and_resolves_under_another_root(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(a))
    assert data_root() == a
    stored = to_stored(a / "clips" / "r1" / "r1__000.mp4")
    assert stored == "clips/r1/r1__000.mp4"
    assert resolve(stored) == a / "clips" / "r1" / "r1__000.mp4"
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(b))  # the same tables read on a node that mounts the data at b
    assert resolve(stored) == b / "clips" / "r1" / "r1__000.mp4"
    assert to_stored(None) is None and resolve(None) is None and resolve("") is None


def test_a_data_root_reached_through_a_link_still_gives_relative_paths(tmp_path, monkeypatch):
    real = tmp_path / "real"
    (real / "media").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "link"))
    assert to_stored(real / "media" / "x.mp4") == "media/x.mp4"  # written by a process that resolved the root
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(real))
    assert to_stored(tmp_path / "link" / "media" / "x.mp4") == "media/x.mp4"


def test_a_file_outside_the_data_root_is_stored_absolute_with_one_warning_per_folder(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "data"))
    inbox = tmp_path / "incoming"
    with caplog.at_level(logging.WARNING, logger="hvbench_assets.core.media.paths"):
        first = to_stored(inbox / "a.mp4")
        to_stored(inbox / "b.mp4")
    assert first == str(inbox / "a.mp4") and resolve(first) == inbox / "a.mp4"
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "outside the data root" in said[0] and str(inbox) in said[0]
    # "../" tricks do not make an outside file look inside
    assert to_stored(tmp_path / "data" / ".." / "incoming" / "c.mp4") == str(inbox / "c.mp4")


def test_absolute_paths_of_an_old_warehouse_are_read_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path / "new"))
    old = str(tmp_path / "old" / "clips" / "x.mp4")  # written before paths were relative
    assert resolve(old) == tmp_path / "old" / "clips" / "x.mp4"


def test_stored_columns_converts_only_the_named_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("HVBENCH_DATA_DIR", str(tmp_path))
    row = {"track_id": 0, "face_clip_path": str(tmp_path / "m" / "f.mp4"), "reason": str(tmp_path)}
    out = stored_columns(row, ("face_clip_path", "body_clip_path"))
    assert out == {"track_id": 0, "face_clip_path": "m/f.mp4", "reason": str(tmp_path)}
    assert row["face_clip_path"].startswith(os.sep)  # the input is not changed
