import os
import time

from hvbench_assets.core.ingest.inbox import FileStat, fingerprint, list_inbox, scan


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


def test_files_done_with_this_content_count_as_picked_whatever_the_state():
    f = FileStat("Talk.mp4", 100, 1000.0)
    done = {"Talk.mp4": (fingerprint(f), "talk-1a2b3c")}  # split before, under the key the registry gave it
    lost = scan([f, FileStat("b.mp4", 50, 1000.0)], {}, now=2000, done=done)
    assert lost.pickups == [] and lost.state["files"]["Talk.mp4"] == {"fp": fingerprint(f), "picked": fingerprint(f),
                                                                      "key": "talk-1a2b3c"}
    assert lost.state["keys"]["talk-1a2b3c"] == "Talk.mp4"
    assert [p.rel_path for p in scan([f, FileStat("b.mp4", 50, 1000.0)], lost.state, now=2000, done=done).pickups] == ["b.mp4"]
    # other content under the same name is not done: it settles and is picked up as a change, on its key
    changed = FileStat("Talk.mp4", 120, 1500.0)
    state = scan([changed], lost.state, now=2000, done=done).state
    again = scan([changed], state, now=2000, done=done).pickups
    assert [(p.raw_video_id, p.changed) for p in again] == [("talk-1a2b3c", True)]


def test_non_videos_and_partial_downloads_are_skipped_once_with_a_reason(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "movie.mp4.part").write_bytes(b"x")
    (tmp_path / ".hidden.mp4").write_bytes(b"x")
    r1 = scan(list_inbox(tmp_path), {}, now=time.time())
    reasons = dict(r1.skipped)
    assert reasons["notes.txt"].startswith("not a video file extension")
    assert reasons["movie.mp4.part"].startswith("partial download")
    assert reasons[".hidden.mp4"].startswith("hidden name")
    assert scan(list_inbox(tmp_path), r1.state, now=time.time()).skipped == []  # not repeated every tick


def test_keys_of_vanished_files_stay_reserved():
    s = scan([FileStat("a.mp4", 1, 0.0)], {}, now=100).state
    s = scan([FileStat("a.mp4", 1, 0.0)], s, now=100).state
    s = scan([], s, now=100).state  # a.mp4 removed
    s = scan([FileStat("A.mov", 1, 0.0)], s, now=100).state
    r = scan([FileStat("A.mov", 1, 0.0)], s, now=100)
    assert r.pickups[0].raw_video_id != "a"


def _hostile_inbox(tmp_path):
    """The inbox of the issue: an escaping-looking folder, a dot-dot file name, a broken link, links to a
    folder and a file outside, a link to /etc/passwd, a fifo; plus a real video beside them."""
    inbox, outside = tmp_path / "inbox", tmp_path / "elsewhere"
    (inbox / "..%2F..%2Fescape").mkdir(parents=True)
    (inbox / "..%2F..%2Fescape" / "a.mp4").write_bytes(b"x" * 10)
    (inbox / "..escape.mp4").write_bytes(b"x" * 10)
    (inbox / "good.mp4").write_bytes(b"x" * 10)
    (inbox / "gone.mp4").symlink_to(tmp_path / "missing.mp4")
    (outside / "shots").mkdir(parents=True)
    (outside / "shots" / "far.mp4").write_bytes(b"x" * 20)
    (inbox / "shots").symlink_to(outside / "shots", target_is_directory=True)
    (inbox / "passwd.mp4").symlink_to("/etc/passwd")
    (inbox / "again.mp4").symlink_to(inbox / "good.mp4")
    (inbox / "loop").symlink_to(inbox, target_is_directory=True)
    os.mkfifo(inbox / "pipe.mp4")
    return inbox, outside


def test_hostile_inbox_entries_are_passed_over_each_with_a_reason(tmp_path):
    inbox, _ = _hostile_inbox(tmp_path)
    listing = list_inbox(inbox)
    readable = [f.rel_path for f in listing if f.passed_over is None]
    assert readable == ["good.mp4"]
    reasons = {f.rel_path: f.passed_over for f in listing if f.passed_over}
    assert reasons["..%2F..%2Fescape/"].startswith("hidden folder") and "1 file(s)" in reasons["..%2F..%2Fescape/"]
    assert reasons["..escape.mp4"].startswith("hidden name")
    assert reasons["gone.mp4"].startswith("broken symlink")
    assert reasons["shots"].startswith("symlink to ") and "HVBENCH_ALLOWED_ROOTS: not followed" in reasons["shots"]
    assert reasons["passwd.mp4"] == "symlink to /etc/passwd, outside the inbox and HVBENCH_ALLOWED_ROOTS: not followed"
    assert reasons["again.mp4"] == "symlink to good.mp4 inside the inbox, which is read under its own name"
    assert reasons["loop"].startswith("symlink to . inside the inbox")
    assert reasons["pipe.mp4"].startswith("not a regular file")
    # the scan says each once, and again only when the entry's content changes
    r1 = scan(listing, {}, now=time.time())
    assert {p for p, _ in r1.skipped} == set(reasons) | {"good.mp4"}  # good.mp4: waiting to settle
    r2 = scan(list_inbox(inbox), r1.state, now=time.time())
    assert r2.skipped == []
    (inbox / "..escape.mp4").write_bytes(b"y" * 30)
    r3 = scan(list_inbox(inbox), r2.state, now=time.time())
    assert [p for p, _ in r3.skipped] == ["..escape.mp4"]


def test_symlinks_into_allowed_roots_are_followed(tmp_path):
    inbox, outside = _hostile_inbox(tmp_path)
    listing = list_inbox(inbox, allowed_roots=[outside])
    readable = {f.rel_path: f for f in listing if f.passed_over is None}
    assert set(readable) == {"good.mp4", "shots/far.mp4"} and readable["shots/far.mp4"].size == 20
    assert "passwd.mp4" not in readable  # /etc is still not an allowed root
    # a link inside an allowed root that leads back out is checked on its own
    (outside / "shots" / "sneaky.mp4").symlink_to("/etc/passwd")
    reasons = {f.rel_path: f.passed_over for f in list_inbox(inbox, allowed_roots=[outside])}
    assert reasons["shots/sneaky.mp4"].startswith("symlink to /etc/passwd")
