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
    # four chunks of 600 in one transaction: the path of any partition larger than INSERT_CHUNK (not more rows:
    # each costs ~3 ms CPU here, DuckDB's client retries `import pandas` for every converted value)
    n = 2_000
    rows = [{"track_id": i if i % 7 else None, "info": None if i % 2 else {"i": i}, "boxes": None if i % 3 else [i, 0.5]}
            for i in range(n)]
    warehouse.INSERT_CHUNK = 600
    assert warehouse.replace(LABELS, {"video_id": "big"}, rows) == n
    got = warehouse.query("SELECT count(*) AS n, count(track_id) AS t, count(info) AS j, count(boxes) AS b "
                          "FROM labels_demo WHERE video_id = 'big'")[0]
    assert got == {"n": n, "t": n - len(range(0, n, 7)), "j": n // 2, "b": len(range(0, n, 3))}


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
