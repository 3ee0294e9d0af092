import os
import time

from hvbench_assets.core.ingest.inbox import FileStat, list_inbox, scan


def test_file_is_picked_up_only_after_it_settles(tmp_path):
    f = tmp_path / "clip.mp4"
    f.write_bytes(b"x" * 10)
    old = time.time() - 60
    os.utime(f, (old, old))
    first = scan(list_inbox(tmp_path), {}, now=time.time(), settle_s=10)
    assert first.pickups == [] and first.skipped[0][1].startswith("waiting for the file to settle")
    second = scan(list_inbox(tmp_path), first.state, now=time.time(), settle_s=10)
    assert [p.raw_video_id for p in second.pickups] == ["clip"]
    third = scan(list_inbox(tmp_path), second.state, now=time.time(), settle_s=10)
    assert third.pickups == [] and third.skipped == []


def test_file_still_growing_is_not_picked_up():
    state = scan([FileStat("a.mp4", 100, 1000.0)], {}, now=2000).state
    growing = scan([FileStat("a.mp4", 250, 1001.0)], state, now=2000)
    assert growing.pickups == []
    assert scan([FileStat("a.mp4", 250, 1001.0)], growing.state, now=2000).pickups  # stable now


def test_recent_mtime_waits_even_when_size_is_stable():
    state = scan([FileStat("a.mp4", 100, 1995.0)], {}, now=2000, settle_s=10).state
    assert scan([FileStat("a.mp4", 100, 1995.0)], state, now=2000, settle_s=10).pickups == []
    assert scan([FileStat("a.mp4", 100, 1995.0)], state, now=2010, settle_s=10).pickups


def test_changed_content_is_picked_up_again_under_the_same_key():
    s = scan([FileStat("a.mp4", 100, 1000.0)], {}, now=2000).state
    s = scan([FileStat("a.mp4", 100, 1000.0)], s, now=2000).state
    s = scan([FileStat("a.mp4", 120, 1500.0)], s, now=2000).state
    again = scan([FileStat("a.mp4", 120, 1500.0)], s, now=2000)
    assert len(again.pickups) == 1 and again.pickups[0].changed and again.pickups[0].raw_video_id == "a"


def test_non_videos_and_partial_downloads_are_skipped_once_with_a_reason(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "movie.mp4.part").write_bytes(b"x")
    (tmp_path / ".hidden.mp4").write_bytes(b"x")
    r1 = scan(list_inbox(tmp_path), {}, now=time.time())
    reasons = dict(r1.skipped)
    assert reasons["notes.txt"].startswith("not a video file extension")
    assert reasons["movie.mp4.part"].startswith("partial download")
    assert ".hidden.mp4" not in reasons
    assert scan(list_inbox(tmp_path), r1.state, now=time.time()).skipped == []  # not repeated every tick


def test_keys_of_vanished_files_stay_reserved():
    s = scan([FileStat("a.mp4", 1, 0.0)], {}, now=100).state
    s = scan([FileStat("a.mp4", 1, 0.0)], s, now=100).state
    s = scan([], s, now=100).state  # a.mp4 removed
    s = scan([FileStat("A.mov", 1, 0.0)], s, now=100).state
    r = scan([FileStat("A.mov", 1, 0.0)], s, now=100)
    assert r.pickups[0].raw_video_id != "a"
