"""The demo's generated samples: made once per inbox, and byte-identical wherever they are made, so a fresh demo
gets the same clips, content hashes and question ids as the last one (encoding is repeatable: core/media/encode.py)."""

from __future__ import annotations

import hashlib


def test_a_rerun_keeps_the_samples_already_in_the_inbox(tmp_path):
    from hvbench_assets.demo.main import make_samples

    first = make_samples(tmp_path)
    digests = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in first}
    again = make_samples(tmp_path)
    assert again == first
    assert {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in again} == digests


def test_two_fresh_inboxes_get_byte_identical_samples(tmp_path):
    from hvbench_assets.demo.main import make_samples

    first, second = make_samples(tmp_path / "a"), make_samples(tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
