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


def test_a_commit_folds_the_wal_in_and_reads_leave_the_file_alone(tmp_path):
    """Every opening replays the WAL (~3 ms more for a few KB of a job's writes, ~700 openings per batch of
    short clips), so a commit folds it into the file at once (WAL_LIMIT 0); a read neither folds nor writes. A
    plain DuckDB reader in another process sees every committed row, and the file alone can be copied."""
    import subprocess
    import sys

    db = tmp_path / "w.duckdb"
    wal = tmp_path / "w.duckdb.wal"
    wh = Warehouse(db)
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": i} for i in range(3)])
    assert not wal.exists() or wal.stat().st_size == 0
    read = ("import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(con.execute(\"SELECT count(*) FROM labels_demo WHERE video_id = 'v'\").fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", read, str(db)], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "3"
    for i in range(10):
        wh.replace(LABELS, {"video_id": f"s{i}"}, [{"track_id": k, "info": {"text": "y" * 200}} for k in range(30)])
        assert not wal.exists() or wal.stat().st_size == 0, (i, wal.stat().st_size)
    stamp = db.stat().st_mtime_ns
    assert wh.count(LABELS, video_id="s3") == 30 and wh.rows(LABELS, video_id="v")
    assert db.stat().st_mtime_ns == stamp and not wal.exists()  # reads wrote nothing
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    assert Warehouse(copy).count(LABELS, video_id="s9") == 30


def test_a_new_file_gets_the_compact_storage_format_and_an_old_one_is_upgraded_in_place(tmp_path):
    """New files are written in STORAGE_VERSION's format (an attach costs a third of the default's); a file of
    the default format keeps working and `upgrade_storage` rewrites it with every table, type and row, including
    rows still in its WAL; a second upgrade has nothing to do."""
    import duckdb

    new = Warehouse(tmp_path / "new.duckdb")
    new.replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    assert new.storage_format() == "v1.2.0+" and new.storage_current()

    old_path = tmp_path / "old.duckdb"
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{old_path}' AS o (STORAGE_VERSION 'v1.0.0')")
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("SET checkpoint_threshold = '1GB'")
    con.execute("USE o")
    con.execute(ODD.ddl())  # a table created by another DuckDB client, with a WAL left behind
    con.close()
    old = Warehouse(old_path)
    rows = [{"n": 2**40 + i, "i": i, "x": 0.1 * i, "s": f"é{i}", "ok": i % 2 == 0, "info": {"k": [i, None]}}
            for i in range(200)]
    old.replace(ODD, {"video_id": "a"}, rows, provenance={"backend": "b", "model": "m", "code_version": "1"})
    old.replace(LABELS, {"video_id": "v"}, [{"track_id": 7, "boxes": [1.5, 2.5]}])
    con = duckdb.connect(":memory:")  # another client's commit, left in the WAL
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("SET checkpoint_threshold = '1GB'")
    con.execute(f"ATTACH '{old_path}' AS o")
    con.execute("INSERT INTO o.labels_demo (video_id, track_id) VALUES ('w', 8)")
    con.close()
    assert (tmp_path / "old.duckdb.wal").stat().st_size > 0
    assert old.storage_format() == "v1.0.0+" and not old.storage_current()
    types = old.query("SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY ALL")
    before = old.query("SELECT * FROM odd_values ORDER BY i")

    assert old.upgrade_storage() == ("v1.0.0+", "v1.2.0+")
    assert old.storage_current()
    assert old.query("SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY ALL") == types
    assert old.query("SELECT * FROM odd_values ORDER BY i") == before
    assert old.rows(LABELS, video_id="v")[0]["boxes"] == [1.5, 2.5] and old.rows(LABELS, video_id="w")[0]["track_id"] == 8
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("old.")) == ["old.duckdb", "old.duckdb.lock"]
    assert old.upgrade_storage() == ("v1.2.0+", "v1.2.0+")


def test_the_cli_reports_and_upgrades_an_old_warehouse(tmp_path, capsys):
    import duckdb

    from hvbench_assets.cli import main

    path = tmp_path / "old.duckdb"
    duckdb.connect(":memory:").execute(f"ATTACH '{path}' AS o (STORAGE_VERSION 'v1.0.0')")
    Warehouse(path).replace(LABELS, {"video_id": "v"}, [{"track_id": 1}])
    assert main(["warehouse", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "storage format v1.0.0+" in out and "hvbench warehouse upgrade" in out
    assert main(["warehouse", "upgrade", str(path)]) == 0
    assert "v1.0.0+ -> v1.2.0+" in capsys.readouterr().out
    assert main(["warehouse", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "storage format v1.2.0+" in out and "upgrade" not in out and "labels_demo" in out
    assert main(["warehouse", "upgrade", str(tmp_path / "missing.duckdb")]) == 1


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


def test_a_missing_table_reads_empty_and_never_a_python_variable_of_its_name(warehouse):
    import numpy as np

    spec = TableSpec("annotations", (("video_id", "VARCHAR"), ("kind", "VARCHAR")))
    annotations = np.arange(3)  # noqa: F841 - DuckDB's replacement scans would have read this as the table
    assert warehouse.rows(spec, video_id="v") == [] and warehouse.count(spec) == 0
    assert not warehouse.has_table("annotations")
    with pytest.raises(Exception, match="not found|does not exist"):  # other errors still raise
        warehouse.query('SELECT nope FROM "annotations"')
    warehouse.replace(spec, {"video_id": "v"}, [{"kind": "k"}])
    assert warehouse.has_table("annotations") and warehouse.count(spec) == 1
    with pytest.raises(Exception, match="not found"):
        warehouse.rows(spec, order_by="missing_column", video_id="v")
