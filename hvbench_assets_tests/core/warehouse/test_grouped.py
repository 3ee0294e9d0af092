"""Held writes (core/warehouse/grouped.py): a batch's per-clip replaces commit together, this thread always
reads what it wrote, and one clip's unwritable rows cost only that clip."""

from __future__ import annotations

import os

import pytest

from hvbench_assets.core.warehouse import TableSpec, Warehouse
from hvbench_assets.core.warehouse.grouped import current, grouped_writes

ROWS = TableSpec("grouped_rows", (("video_id", "VARCHAR"), ("n", "INTEGER")))
OTHER = TableSpec("grouped_other", (("video_id", "VARCHAR"), ("s", "VARCHAR")))
INPUTS = TableSpec("grouped_inputs", (("video_id", "VARCHAR"), ("s", "VARCHAR")))


@pytest.fixture
def wh(tmp_path):
    wh = Warehouse(tmp_path / "g.duckdb")
    wh.replace(OTHER, {"video_id": "old"}, [{"s": "x"}])
    wh.replace(INPUTS, {"video_id": "old"}, [{"s": "in"}])
    wh.replace(ROWS, {"video_id": "old"}, [{"n": 1}, {"n": 2}])
    return wh


def _commits(monkeypatch) -> list:
    made: list = []
    real = Warehouse._commit_held

    def spy(self, items):
        made.append(sorted({spec.name for spec, *_ in items}))
        return real(self, items)

    monkeypatch.setattr(Warehouse, "_commit_held", spy)
    return made


def test_clips_writes_commit_once_and_reads_of_other_tables_leave_them_held(wh, monkeypatch):
    made = _commits(monkeypatch)
    other = Warehouse(wh.path)  # another object on the same file reads like this one
    with grouped_writes() as group:
        for i, vid in enumerate(["a", "b", "c"]):
            group.owner = vid
            assert wh.rows(INPUTS, video_id="old")[0]["s"] == "in"  # a clip reading its inputs commits nothing
            assert wh.query("SELECT count(*) AS n FROM grouped_inputs")[0]["n"] == 1
            assert wh.replace_tables([(ROWS, {"video_id": vid}, [{"n": 10 + i}] * (i + 1), None),
                                      (OTHER, {"video_id": vid}, [{"s": vid}], None)]) == i + 2
            # counts see the held rows without committing them
            assert wh.count(ROWS) == 2 + sum(range(1, i + 2)) and other.count(ROWS, video_id=vid) == i + 1
            assert wh.count(ROWS, n=10 + i) == i + 1 and wh.count(ROWS, video_id="old") == 2
        assert made == [] and group.commits == 0
        group.owner = None
    assert made == [["grouped_other", "grouped_rows"]]  # one transaction at the end
    assert wh.count(ROWS) == 8 and [r["s"] for r in wh.rows(OTHER, order_by="video_id")] == ["a", "b", "c", "x"]
    assert current() is None


def test_a_read_of_a_held_table_commits_first_and_a_later_write_replaces_an_earlier_one(wh, monkeypatch):
    made = _commits(monkeypatch)
    with grouped_writes():
        wh.replace(ROWS, {"video_id": "a"}, [{"n": 1}])
        wh.replace(ROWS, {"video_id": "a"}, [{"n": 2}, {"n": 3}])  # as if the first had been committed
        assert wh.query("SELECT sum(n) AS s FROM grouped_rows WHERE video_id = 'a'")[0]["s"] == 5
        assert len(made) == 1
        wh.replace(OTHER, {"video_id": "a"}, [{"s": "y"}])
        with wh.connect() as con:  # a raw connection could read anything: what is held commits first
            assert con.execute("SELECT s FROM grouped_other WHERE video_id = 'a'").fetchone() == ("y",)
        assert len(made) == 2
    assert len(made) == 2  # nothing was left to commit


def test_read_then_replace_reads_the_held_writes_in_its_own_transaction(wh, monkeypatch):
    made = _commits(monkeypatch)
    with grouped_writes() as group:
        wh.replace(ROWS, {"video_id": "a"}, [{"n": 5}])

        def build(con):
            (total,) = con.execute("SELECT sum(n) FROM grouped_rows").fetchone()
            return [(OTHER, {"video_id": "sum"}, [{"s": str(total)}], None)]

        assert wh.read_then_replace([OTHER], build) == 1
        assert made == [] and group.commits == 1  # the held write went with it
    assert wh.rows(OTHER, video_id="sum")[0]["s"] == "8" and wh.count(ROWS, video_id="a") == 1


def test_a_clip_whose_rows_cannot_be_written_fails_alone(wh):
    with grouped_writes() as group:
        for vid, n in (("a", 1), ("bad", "not a number"), ("c", 3)):
            group.owner = vid
            wh.replace(ROWS, {"video_id": vid}, [{"n": n}])
        group.owner = None
    assert set(group.failed) == {"bad"} and "not a number" in group.failed["bad"]
    assert [r["video_id"] for r in wh.rows(ROWS, order_by="video_id")] == ["a", "c", "old", "old"]


def test_unowned_writes_that_fail_raise(wh):
    with pytest.raises(Exception, match="not a number"):
        with grouped_writes():
            wh.replace(ROWS, {"video_id": "x"}, [{"n": "not a number"}])


def test_nested_groups_commit_with_the_outer_one_and_a_forked_child_holds_nothing(wh, monkeypatch):
    made = _commits(monkeypatch)
    with grouped_writes() as outer:
        with grouped_writes() as inner:
            assert inner is outer
            wh.replace(ROWS, {"video_id": "a"}, [{"n": 1}])
        assert made == []
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child neither sees nor commits its parent's held writes
            os.write(write, b"1" if current() is None else b"0")
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 1) == b"1"
    assert len(made) == 1 and wh.count(ROWS, video_id="a") == 1


def test_commit_held_commits_now_for_effects_that_need_the_rows_committed(wh, monkeypatch):
    made = _commits(monkeypatch)
    with grouped_writes():
        wh.replace(ROWS, {"video_id": "a"}, [{"n": 1}])
        wh.commit_held()  # e.g. before deleting the files the replaced rows named
        assert len(made) == 1
        wh.commit_held()  # nothing held: no transaction
        assert len(made) == 1


def test_a_read_then_replace_beside_an_unwritable_held_clip_still_writes(wh):
    """The combined transaction fails on the held bad rows: those are committed clip by clip (the bad clip
    recorded as failed), then the read-then-replace runs alone."""
    with grouped_writes() as group:
        for vid, n in (("a", 1), ("bad", "not a number")):
            group.owner = vid
            wh.replace(ROWS, {"video_id": vid}, [{"n": n}])
        group.owner = "c"
        assert wh.read_then_replace([OTHER], lambda con: [(OTHER, {"video_id": "c"}, [{"s": "ok"}], None)]) == 1
    assert set(group.failed) == {"bad"}
    assert wh.count(ROWS, video_id="a") == 1 and wh.rows(OTHER, video_id="c")[0]["s"] == "ok"
