"""Content already split is recognised by its bytes when its size and mtime changed (core/ingest/done.py)."""

from __future__ import annotations

from pathlib import Path

from hvbench_assets.core.ingest.done import CHECKING, SplitFile, recognise_by_content
from hvbench_assets.core.ingest.inbox import FileStat, fingerprint, scan


def test_same_bytes_are_recognised_within_a_budget_and_hashed_once(tmp_path):
    split = {f"{n}.mp4": SplitFile(n, 100, 1000.0, f"sha-{n}") for n in ("a", "b", "c", "d")}
    files = [FileStat("a.mp4", 100, 1000.0),  # unchanged: nothing to read
             FileStat("b.mp4", 100, 5000.0),  # copied without its mtime, same bytes
             FileStat("c.mp4", 100, 5000.0),  # same size, other bytes
             FileStat("d.mp4", 120, 5000.0),  # other size: other content, never read
             FileStat("e.mp4", 100, 5000.0)]  # never split
    read: list[str] = []

    def hasher(path: Path) -> str:
        read.append(path.name)
        return {"b.mp4": "sha-b", "c.mp4": "edited"}[path.name]

    clock = iter([0.0, 30.0, 30.0, 30.0]).__next__  # the budget is spent after the first file
    first = recognise_by_content(files, split, tmp_path, picked={}, hashed={}, budget_s=20.0, hasher=hasher,
                                 clock=clock)
    assert read == ["b.mp4"] and first.done == {"b.mp4": (fingerprint(files[1]), "b")}
    assert first.waiting == {"c.mp4": CHECKING}
    second = recognise_by_content(files, split, tmp_path, picked={"b.mp4": fingerprint(files[1])},
                                  hashed=first.hashed, hasher=hasher)
    assert read == ["b.mp4", "c.mp4"] and second.done == {} and second.waiting == {}
    third = recognise_by_content(files, split, tmp_path, picked={"b.mp4": fingerprint(files[1])},
                                 hashed={**first.hashed, **second.hashed}, hasher=hasher)
    assert read == ["b.mp4", "c.mp4"] and third.done == {}  # c's hash for this fingerprint is remembered


def test_a_waiting_file_keeps_its_state_and_is_not_picked_up():
    f = FileStat("a.mp4", 100, 5000.0)
    state = {"files": {"a.mp4": {"fp": "100-1000000", "picked": "100-1000000", "key": "a"}}, "keys": {"a": "a.mp4"}}
    result = scan([f], state, now=9000.0, settle_s=0, waiting={"a.mp4": CHECKING})
    assert result.pickups == [] and result.skipped == [("a.mp4", CHECKING)]
    assert result.state["files"]["a.mp4"] == state["files"]["a.mp4"]
