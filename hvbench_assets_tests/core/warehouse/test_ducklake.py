"""The DuckLake backend with its catalog in a real Postgres: the facade's behaviour (the same tests as the
DuckDB file), concurrent writer processes, commit conflicts, an unreachable catalog, and the copy between
backends."""

import datetime as dt
import multiprocessing as mp
import threading
import time

import pytest

from hvbench_assets.core.warehouse import TableSpec, Warehouse, WarehouseError
from hvbench_assets.core.warehouse.copy import copy_warehouse
from hvbench_assets_tests.core.warehouse.test_store import (  # noqa: F401  (run again on DuckLake)
    LABELS,
    test_new_columns_are_added_to_an_existing_table,
    test_nulls_and_large_partitions_round_trip,
    test_replace_is_idempotent_per_partition,
    test_replace_tables_is_one_transaction,
    test_rows_cannot_escape_their_partition,
    test_unknown_columns_and_wrong_keys_are_errors,
)

COUNTER = TableSpec("counter_demo", (("name", "VARCHAR"), ("value", "INTEGER")), key=("name",), provenance=False)


@pytest.fixture
def lake(postgres, tmp_path):
    """A new DuckLake location (own database, own data folder)."""
    return postgres.new_database(), tmp_path / "lake_files"


@pytest.fixture
def warehouse(lake):  # overrides conftest's DuckDB file for the tests imported above
    location, files = lake
    return Warehouse(location, data_path=files)


def test_ducklake_is_chosen_by_location_and_keeps_data_files_in_the_data_path(lake):
    location, files = lake
    wh = Warehouse(location, data_path=files)
    assert wh.backend == "ducklake" and wh.path == location
    wh.replace(LABELS, {"video_id": "v"}, [{"track_id": 1, "info": {"a": [1, 2]}, "boxes": [0.5]}])
    assert list(files.rglob("*.parquet"))
    assert wh.table_names() == ["labels_demo"]  # DuckLake's own catalog tables are not listed
    again = Warehouse(location)  # the catalog remembers its data path
    assert again.rows(LABELS)[0]["info"] == {"a": [1, 2]}
    assert Warehouse("x.duckdb").backend == "duckdb"


def _lake_writer(location: str, worker: int, partitions: list[str], rounds: int, increments: int, out) -> None:
    wh = Warehouse(location)
    for r in range(rounds):
        for p in partitions:
            rows = [{"track_id": t, "info": {"w": worker, "r": r}} for t in range(20)]
            wh.replace(LABELS, {"video_id": p}, rows, provenance={"backend": f"w{worker}"})

    def bump(con):  # read-modify-write: lost updates would show in the final value
        got = con.execute("SELECT value FROM counter_demo WHERE name = 'n'").fetchall()
        return [(COUNTER, {"name": "n"}, [{"value": (got[0][0] if got else 0) + 1}], None)]

    for _ in range(increments):
        wh.read_then_replace([COUNTER], bump)
    out.put((worker, wh.conflicts))


def _run_writers(location: str, partitions_of, rounds: int, increments: int) -> int:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_lake_writer, args=(location, w, partitions_of(w), rounds, increments, out))
             for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
    assert [p.exitcode for p in procs] == [0] * 4
    return sum(out.get(timeout=5)[1] for _ in procs)


@pytest.mark.slow
def test_four_processes_replace_disjoint_and_overlapping_partitions_exactly(lake):
    location, files = lake
    Warehouse(location, data_path=files).ensure(LABELS, COUNTER)
    _run_writers(location, lambda w: [f"own{w}_{i}" for i in range(3)], rounds=2, increments=0)
    shared = [f"shared{i}" for i in range(5)]
    conflicts = _run_writers(location, lambda w: shared, rounds=2, increments=25)
    wh = Warehouse(location)
    counts = {r["video_id"]: r["n"] for r in wh.query("SELECT video_id, count(*) AS n FROM labels_demo GROUP BY 1")}
    assert counts == {**{f"own{w}_{i}": 20 for w in range(4) for i in range(3)}, **{p: 20 for p in shared}}
    # every partition holds exactly one write: one writer, one round, tracks 0..19 once
    mixed = wh.query("SELECT video_id FROM labels_demo GROUP BY 1 HAVING count(DISTINCT backend) > 1 "
                     "OR count(DISTINCT json_extract(info, '$.r')) > 1 OR count(DISTINCT track_id) <> 20")
    assert mixed == []
    assert {r["video_id"]: r["backend"] for r in wh.query(
        "SELECT DISTINCT video_id, backend FROM labels_demo WHERE video_id LIKE 'own%'")} == {
        f"own{w}_{i}": f"w{w}" for w in range(4) for i in range(3)}
    # no increment lost: without Catalog.exclusive DuckLake let ~1 % of them vanish (4-13 of 400 measured)
    assert wh.rows(COUNTER)[0]["value"] == 4 * 25
    print(f"conflicts retried: {conflicts}")


def test_read_then_writes_of_one_table_take_turns_across_postgres_sessions(lake):
    location, files = lake
    Warehouse(location, data_path=files).ensure(COUNTER)
    first, second = Warehouse(location), Warehouse(location)  # two catalogs: two Postgres sessions
    inside, release, order = threading.Event(), threading.Event(), []

    def bump(name, wait):
        def build(con):
            got = con.execute("SELECT value FROM counter_demo WHERE name = 'n'").fetchall()
            order.append(name)
            if wait:
                inside.set()
                release.wait(30)
            return [(COUNTER, {"name": "n"}, [{"value": (got[0][0] if got else 0) + 1}], None)]
        return build

    a = threading.Thread(target=first.read_then_replace, args=([COUNTER], bump("a", True)))
    a.start()
    assert inside.wait(30)
    b = threading.Thread(target=second.read_then_replace, args=([COUNTER], bump("b", False)))
    b.start()
    time.sleep(1.5)
    assert order == ["a"]  # b waits for a's commit instead of reading the value a is about to replace
    release.set()
    a.join(30), b.join(30)
    assert order == ["a", "b"] and first.conflicts == second.conflicts == 0
    assert first.rows(COUNTER)[0]["value"] == 2
    second.replace_tables([(COUNTER, {"name": "m"}, [{"value": 7}], None)])  # plain replaces never wait


def test_a_commit_that_loses_the_race_is_retried_on_fresh_data(lake):
    location, files = lake
    first, second = Warehouse(location, data_path=files), Warehouse(location)
    first.replace(COUNTER, {"name": "n"}, [{"value": 1}])
    attempts = []

    def bump(con):
        value = con.execute("SELECT value FROM counter_demo WHERE name = 'n'").fetchone()[0]
        if not attempts:  # another process commits between this read and this commit
            second.replace(COUNTER, {"name": "n"}, [{"value": value + 10}])
        attempts.append(value)
        return [(COUNTER, {"name": "n"}, [{"value": value + 1}], None)]

    first.read_then_replace([COUNTER], bump)
    assert attempts == [1, 11] and first.conflicts == 1
    assert [r["value"] for r in first.rows(COUNTER)] == [12]


def test_writers_wait_for_a_stopped_catalog_or_fail_clearly_without_half_writes(lake, postgres):
    location, files = lake
    wh = Warehouse(location, data_path=files, catalog_wait_s=60)
    other = TableSpec("labels_other", (("video_id", "VARCHAR"), ("n", "INTEGER")))
    wh.replace_tables([(LABELS, {"video_id": "v"}, [{"track_id": 1}], None), (other, {"video_id": "v"}, [{"n": 1}], None)])

    impatient = Warehouse(location, catalog_wait_s=1)
    impatient.ensure(LABELS, other)  # so that its read-then-write below first needs the lock's session
    postgres.stop()
    try:
        with pytest.raises(WarehouseError, match="Postgres catalog unreachable"):  # the lock's session too
            impatient.read_then_replace([other], lambda con: [(other, {"video_id": "v"}, [{"n": 9}], None)])
        with pytest.raises(WarehouseError, match="Postgres catalog unreachable"):
            impatient.replace_tables([(LABELS, {"video_id": "v"}, [{"track_id": 2}, {"track_id": 3}], None),
                                      (other, {"video_id": "v"}, [{"n": 2}], None)])
        done = {}
        writer = threading.Thread(target=lambda: done.setdefault("n", wh.replace_tables(
            [(LABELS, {"video_id": "v"}, [{"track_id": 4}, {"track_id": 5}], None),
             (other, {"video_id": "v"}, [{"n": 4}], None)])))
        writer.start()
        time.sleep(3)
        assert writer.is_alive() and not done  # waiting for the catalog, not failing
    finally:
        postgres.start()
    writer.join(120)
    assert done == {"n": 3}
    assert sorted(r["track_id"] for r in wh.rows(LABELS, video_id="v")) == [4, 5]
    assert [r["n"] for r in wh.rows(other, video_id="v")] == [4]


SAMPLE = (
    TableSpec("clips_demo", (("video_id", "VARCHAR"), ("start_s", "DOUBLE"), ("ok", "BOOLEAN"), ("n", "BIGINT"))),
    TableSpec("tracks_demo", (("video_id", "VARCHAR"), ("track_id", "INTEGER"), ("boxes", "DOUBLE[]"),
                              ("meta", "JSON"), ("tags", "VARCHAR[]")), key=("video_id", "track_id")),
)


def test_copy_duckdb_to_ducklake_and_back_gives_identical_tables(lake, tmp_path):
    location, files = lake
    source = Warehouse(tmp_path / "source.duckdb")
    stamp = dt.datetime(2026, 11, 23, 12, 0, 0, 123456)
    for v in range(3):
        source.replace(SAMPLE[0], {"video_id": f"c{v}"}, [{"start_s": v * 1.5, "ok": v != 1, "n": 2**40 + v}],
                       provenance={"backend": "offline", "model": "m", "code_version": "1", "materialized_at": stamp})
        for t in range(4):
            source.replace(SAMPLE[1], {"video_id": f"c{v}", "track_id": t},
                           [{"boxes": [t, 0.25] if t else None, "meta": {"why": "é", "k": [t]} if t % 2 else None,
                             "tags": ["a", None] if t == 3 else []}])

    lake_wh = Warehouse(location, data_path=files)
    assert copy_warehouse(source, lake_wh) == {"clips_demo": 3, "tracks_demo": 12}
    with pytest.raises(WarehouseError, match="already has 2 of these tables"):
        copy_warehouse(source, lake_wh)
    back = Warehouse(tmp_path / "back.duckdb")
    copy_warehouse(lake_wh, back)

    def dump(wh):
        schema = wh.query("SELECT table_name, column_name, data_type, ordinal_position FROM information_schema.columns "
                          "WHERE table_catalog = current_database() ORDER BY 1, 4")
        rows = {t: wh.query(f'SELECT * FROM "{t}" ORDER BY ALL') for t in wh.table_names()}
        return schema, rows

    assert dump(back) == dump(source)
    assert dump(lake_wh)[1] == dump(source)[1]
    # the copy is a working warehouse of the new backend: writes go on there
    lake_wh.replace(SAMPLE[1], {"video_id": "c0", "track_id": 0}, [{"boxes": [9.0]}])
    assert lake_wh.rows(SAMPLE[1], video_id="c0", track_id=0)[0]["boxes"] == [9.0]


def test_cli_copies_into_a_ducklake_and_shows_it(lake, tmp_path, capsys):
    from hvbench_assets.cli import main

    location, files = lake
    source = Warehouse(tmp_path / "w.duckdb")
    source.replace(LABELS, {"video_id": "v"}, [{"track_id": 1, "info": {"a": 1}}, {"track_id": 2}])
    assert main(["warehouse", "copy", str(source.path), location, "--data-path", str(files)]) == 0
    assert "copied 1 tables (2 rows)" in capsys.readouterr().out
    assert main(["warehouse", "copy", str(source.path), location]) == 1
    assert "already has 1 of these tables" in capsys.readouterr().err
    assert main(["warehouse", "info", location]) == 0
    out = capsys.readouterr().out
    assert "(ducklake)" in out and "labels_demo" in out and "duckdb 1.4.4" in out
    assert main(["warehouse", "info", str(tmp_path / "missing.duckdb")]) == 1


def test_model_calls_from_two_writers_all_land_on_ducklake(lake):
    """The MLLM call cache commits through `Warehouse.transaction`, so a lost commit race is retried too."""
    from hvbench_assets.core.mllm.calls import MODEL_CALLS, CallLog

    location, files = lake
    Warehouse(location, data_path=files).ensure(MODEL_CALLS)
    logs = [CallLog(Warehouse(location)) for _ in range(2)]

    def record(n: int) -> None:
        logs[n].linger_s = 0.0
        for i in range(15):
            logs[n].record({"id": f"{n}-{i}", "model": "m", "text": f"answer {i}", "error": None})

    threads = [threading.Thread(target=record, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    fresh = CallLog(Warehouse(location))
    assert all(fresh.lookup(f"{n}-{i}")["text"] == f"answer {i}" for n in range(2) for i in range(15))
    assert Warehouse(location).count(MODEL_CALLS) == 30


def test_a_process_exiting_right_after_a_model_call_ends_cleanly(lake):
    """The log's writer thread, idle, ends 5 s after its last row; when the process exited first, the thread
    ended during interpreter shutdown and dropped the last reference to the DuckLake connection there, which
    aborted the process (exit 134, 'terminate called without an active exception'). At exit the writer is
    now flushed and joined first."""
    import subprocess
    import sys

    from hvbench_assets.core.mllm.calls import MODEL_CALLS, CallLog

    location, files = lake
    Warehouse(location, data_path=files).ensure(MODEL_CALLS)
    script = ("import sys, threading\n"
              "from hvbench_assets.core.mllm.calls import CallLog, _flush_all\n"
              "from hvbench_assets.core.warehouse import Warehouse\n"
              "log = CallLog(Warehouse(sys.argv[1]))\n"
              "log.record({'id': 'late', 'model': 'm', 'text': 'kept', 'error': None}, wait=False)\n"
              "_flush_all()\n"
              "print(sum(t.name == 'model-calls-writer' for t in threading.enumerate()))\n")
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", script, location], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "0"  # joined before the interpreter shuts down
    assert CallLog(Warehouse(location)).lookup("late")["text"] == "kept"


def test_a_process_holding_an_attached_catalog_forks_no_step(lake):
    # the executor forks `transcript` only while fork_safe(): a child forked from a process with an attached
    # DuckLake catalog crashed (SIGSEGV) on the Ray cluster
    from hvbench_assets.core.warehouse.ducklake import fork_safe

    location, files = lake
    wh = Warehouse(location, data_path=files)
    wh.ensure(LABELS)
    assert wh.count(LABELS) == 0 and not fork_safe()
