import multiprocessing as mp

import pytest

from hvbench_assets.core.warehouse import TableSpec, Warehouse, WarehouseError

LABELS = TableSpec("labels_demo", (("video_id", "VARCHAR"), ("track_id", "INTEGER"), ("info", "JSON"), ("boxes", "DOUBLE[]")))


def test_replace_is_idempotent_per_partition(warehouse):
    rows = [{"track_id": i, "info": {"a": i}, "boxes": [1.0, 2.0]} for i in range(3)]
    prov = {"backend": "offline", "model": "m", "code_version": "1"}
    assert warehouse.replace(LABELS, {"video_id": "v1"}, rows, provenance=prov) == 3
    warehouse.replace(LABELS, {"video_id": "v1"}, rows, provenance=prov)
    warehouse.replace(LABELS, {"video_id": "v2"}, rows[:1], provenance=prov)
    assert warehouse.count(LABELS, video_id="v1") == 3 and warehouse.count(LABELS) == 4
    got = warehouse.rows(LABELS, order_by="track_id", video_id="v1")
    assert got[2]["info"] == {"a": 2} and got[0]["boxes"] == [1.0, 2.0]
    assert got[0]["backend"] == "offline" and got[0]["materialized_at"] is not None
    warehouse.replace(LABELS, {"video_id": "v1"}, [], provenance=prov)
    assert warehouse.count(LABELS, video_id="v1") == 0


def test_nulls_and_large_partitions_round_trip(warehouse):
    # four chunks of 600 in one transaction: the path of any partition larger than INSERT_CHUNK
    n = 2_000
    rows = [{"track_id": i if i % 7 else None, "info": None if i % 2 else {"i": i}, "boxes": None if i % 3 else [i, 0.5]}
            for i in range(n)]
    warehouse.INSERT_CHUNK = 600
    assert warehouse.replace(LABELS, {"video_id": "big"}, rows) == n
    got = warehouse.query("SELECT count(*) AS n, count(track_id) AS t, count(info) AS j, count(boxes) AS b "
                          "FROM labels_demo WHERE video_id = 'big'")[0]
    assert got == {"n": n, "t": n - len(range(0, n, 7)), "j": n // 2, "b": len(range(0, n, 3))}


ODD = TableSpec("odd_values", (("video_id", "VARCHAR"), ("n", "BIGINT"), ("i", "INTEGER"), ("x", "DOUBLE"),
                               ("s", "VARCHAR"), ("ok", "BOOLEAN"), ("at", "TIMESTAMP"), ("info", "JSON")))


def test_awkward_values_round_trip_exactly(warehouse):
    """Rows travel to DuckDB as one JSON document: values JSON has no literal for (NaN, infinities, numpy
    scalars, datetimes with a zone) and text that needs escaping must come back as they went in."""
    import datetime as dt
    import math

    import numpy as np

    cet = dt.timezone(dt.timedelta(hours=1))
    rows = [
        {"n": 2**62 + 1, "i": np.int64(-3), "x": float("nan"), "s": 'quote " backslash \\ tab \t é 字 🎬',
         "ok": np.bool_(True), "at": dt.datetime(2026, 11, 24, 8, 0, 0, 123456, tzinfo=cet),
         "info": {"text": "line\nbreak", "list": [1, 2.5, None], "nested": {"é": True}}},
        {"n": -1, "i": 0, "x": float("inf"), "s": "", "ok": False, "at": dt.datetime(2026, 1, 2, 3, 4, 5),
         "info": "just a string"},
        {"n": None, "i": None, "x": np.float32(0.1), "s": None, "ok": None, "at": None, "info": None},
        {"i": 3, "x": -float("inf")},
        {"i": 4, "x": 1 / 3},
    ]
    assert warehouse.replace(ODD, {"video_id": "v"}, rows) == 5
    got = warehouse.rows(ODD, order_by="rowid", video_id="v")
    assert [r["n"] for r in got] == [2**62 + 1, -1, None, None, None]
    assert [r["i"] for r in got] == [-3, 0, None, 3, 4]
    assert math.isnan(got[0]["x"]) and got[1]["x"] == math.inf and got[3]["x"] == -math.inf
    assert got[2]["x"] == float(np.float32(0.1)) and got[4]["x"] == 1 / 3
    assert got[0]["s"] == rows[0]["s"] and got[1]["s"] == "" and got[2]["s"] is None
    assert [r["ok"] for r in got[:3]] == [True, False, None]
    assert got[0]["at"] == dt.datetime(2026, 11, 24, 7, 0, 0, 123456)  # stored in UTC
    assert got[1]["at"] == dt.datetime(2026, 1, 2, 3, 4, 5)
    assert got[0]["info"] == rows[0]["info"] and got[1]["info"] == "just a string" and got[2]["info"] is None


def test_rows_cannot_escape_their_partition(warehouse):
    warehouse.replace(LABELS, {"video_id": "v1"}, [{"video_id": "other", "track_id": 1}])
    assert warehouse.count(LABELS, video_id="v1") == 1 and warehouse.count(LABELS, video_id="other") == 0


def test_unknown_columns_and_wrong_keys_are_errors(warehouse):
    with pytest.raises(WarehouseError, match="unknown columns"):
        warehouse.replace(LABELS, {"video_id": "v"}, [{"nope": 1}])
    with pytest.raises(WarehouseError, match="key columns"):
        warehouse.replace(LABELS, {"track_id": 1}, [])


def test_new_columns_are_added_to_an_existing_table(warehouse):
    warehouse.replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    wider = TableSpec(LABELS.name, LABELS.columns + (("extra", "VARCHAR"),))
    Warehouse(warehouse.path).replace(wider, {"video_id": "v"}, [{"track_id": 1, "extra": "x"}])
    assert warehouse.rows(wider)[0]["extra"] == "x"


def _writer(path: str, worker: int, rounds: int) -> None:
    wh = Warehouse(path)
    for r in range(rounds):
        rows = [{"track_id": t, "info": {"w": worker, "r": r}} for t in range(50)]
        wh.replace(LABELS, {"video_id": f"v{worker}"}, rows, provenance={"backend": "test"})
        wh.query("SELECT count(*) FROM labels_demo")


def test_many_processes_write_without_lock_errors_or_lost_rows(tmp_path):
    path = str(tmp_path / "concurrent.duckdb")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 8)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 6
    wh = Warehouse(path)
    counts = wh.query("SELECT video_id, count(*) AS n FROM labels_demo GROUP BY 1 ORDER BY 1")
    assert counts == [{"video_id": f"v{w}", "n": 50} for w in range(6)]


def test_replace_tables_is_one_transaction(warehouse):
    other = TableSpec("labels_other", (("video_id", "VARCHAR"), ("n", "INTEGER")))
    warehouse.replace_tables([(LABELS, {"video_id": "v"}, [{"track_id": 1}], None),
                              (other, {"video_id": "v"}, [{"n": 5}], None)])
    assert warehouse.count(LABELS, video_id="v") == 1 and warehouse.count(other, video_id="v") == 1
    with pytest.raises(WarehouseError, match="unknown columns"):  # nothing of either table is written
        warehouse.replace_tables([(LABELS, {"video_id": "v"}, [{"track_id": 2}, {"track_id": 3}], None),
                                  (other, {"video_id": "v"}, [{"bad": 1}], None)])
    assert warehouse.count(LABELS, video_id="v") == 1
    assert set(warehouse.forget_video("v")) == {"labels_demo", "labels_other"}
    assert warehouse.count(LABELS, video_id="v") == 0 and warehouse.count(other, video_id="v") == 0


def test_a_wiped_database_file_is_recreated(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    (tmp_path / "w.duckdb").unlink()
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": 2}])
    assert wh.rows(LABELS)[0]["track_id"] == 2


def test_a_batch_opens_the_file_once_and_holds_the_lock(warehouse, monkeypatch):
    import threading

    warehouse.replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    opened = []
    real_open = warehouse._open
    monkeypatch.setattr(warehouse, "_open", lambda deadline: opened.append(1) or real_open(deadline))
    other = Warehouse(warehouse.path, lock_timeout_s=30)
    wrote = threading.Event()

    def write_meanwhile():
        other.replace(LABELS, {"video_id": "w"}, [{"track_id": 2}])
        wrote.set()

    with warehouse.batch():
        assert warehouse.count(LABELS, video_id="v") == 1 and warehouse.rows(LABELS, video_id="v")[0]["track_id"] == 1
        with warehouse.batch():  # nested: the same connection
            assert warehouse.has_table(LABELS.name)
        writer = threading.Thread(target=write_meanwhile)
        writer.start()
        assert not wrote.wait(0.5)  # another writer waits for the batch's lock
    writer.join(30)
    assert wrote.is_set() and len(opened) == 1
    assert warehouse.count(LABELS, video_id="w") == 1 and len(opened) > 1  # outside a batch: an opening per call


def test_closing_keeps_the_wal_which_readers_see_and_which_is_folded_in_when_large(tmp_path):
    """Folding the WAL into the file at every close cost each step ~0.1 s; the WAL stays until it passes
    WAL_LIMIT instead. A plain DuckDB reader in another process still sees every committed row."""
    import subprocess
    import sys

    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": i} for i in range(3)])
    wal = tmp_path / "w.duckdb.wal"
    assert wal.exists() and wal.stat().st_size > 0
    read = ("import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(con.execute(\"SELECT count(*) FROM labels_demo WHERE video_id = 'v'\").fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", read, str(tmp_path / "w.duckdb")], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "3"
    big = [{"track_id": i, "info": {"text": "x" * 200, "i": i}} for i in range(20_000)]  # ~5 MB of rows
    wh.replace(LABELS, {"video_id": "big"}, big)
    assert not wal.exists() or wal.stat().st_size < 32 * 1024  # folded in
    assert wh.count(LABELS, video_id="big") == 20_000 and wh.count(LABELS, video_id="v") == 3
    # every opening replays the WAL, so a job's many small writes must not let it grow (2 MB let each run of a
    # backfill slow the next): each write of ~6 KB of rows leaves it below the limit plus one write
    for i in range(40):
        wh.replace(LABELS, {"video_id": f"s{i}"}, [{"track_id": k, "info": {"text": "y" * 200}} for k in range(30)])
        assert not wal.exists() or wal.stat().st_size < 64 * 1024, (i, wal.stat().st_size)
    wh.replace(LABELS, {"video_id": "late"}, [{"track_id": 9}])
    wh.checkpoint()  # before copying the file alone
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes((tmp_path / "w.duckdb").read_bytes())
    assert Warehouse(copy).count(LABELS, video_id="late") == 1


def test_every_call_detaches_the_file_even_after_a_failure(tmp_path):
    """Calls attach the file to the process's one DuckDB instance and detach it again, so another process
    can write between calls; a failed transaction must not leave it attached (that would lock it)."""
    import subprocess
    import sys

    from hvbench_assets.core.warehouse.store import _INSTANCE

    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    with pytest.raises(WarehouseError):
        wh.replace(LABELS, {"video_id": "v"}, [{"track_id": 2, "nope": 1}])

    def bad(con):
        con.execute("SELECT no_such_column FROM labels_demo")
    with pytest.raises(Exception, match="no_such_column"):
        wh.read_then_replace([LABELS], bad)
    with wh.batch():
        assert wh.count(LABELS) == 1
    attached = _INSTANCE.attach(tmp_path / "probe.duckdb")
    names = {r[0] for r in attached[0].execute("SELECT database_name FROM duckdb_databases()").fetchall()}
    _INSTANCE.detach(*attached)
    assert not any(n.startswith("hvbench_") and n != attached[1] for n in names)
    write = ("import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
             "con.execute(\"INSERT INTO labels_demo (video_id, track_id) VALUES ('w', 5)\"); con.close()")
    subprocess.run([sys.executable, "-c", write, str(tmp_path / "w.duckdb")], check=True, timeout=120)
    assert wh.count(LABELS, video_id="w") == 1
