"""The demo's generated samples are made once per inbox: a rerun of the demo works on the same data (an AAC
encoder's bytes differ from run to run, which would give the clip a new content hash and new question ids)."""

from __future__ import annotations

import hashlib


def test_a_rerun_keeps_the_samples_already_in_the_inbox(tmp_path):
    from hvbench_assets.demo.main import make_samples

    first = make_samples(tmp_path)
    digests = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in first}
    again = make_samples(tmp_path)
    assert again == first
    assert {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in again} == digests
