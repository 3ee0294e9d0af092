"""Review at scale, as behaviour: the review app's in-memory state equals a full recomputation after every kind of
change; reviewed_questions writes only what changed, in batches that release the lock and start again when
their inputs moved; set-based deletes; the pool's single pass picks what a rescan per pick picks."""

from __future__ import annotations

import datetime as dt
import random

from hvbench_assets.core.benchmark.pool import PoolSettings, _tiebreak, select_pool, split_quota
from hvbench_assets.core.curation.live import LiveState
from hvbench_assets.core.curation.queue import adjudication_list, review_queue
from hvbench_assets.core.curation.reviewed import update_reviewed
from hvbench_assets.core.curation.state import curate, excluded_tasks
from hvbench_assets.core.curation.store import assign, load_state, record_decision
from hvbench_assets.core.curation.tables import REVIEW_DECISIONS, REVIEWED_QUESTIONS
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import TableSpec, Warehouse

EXCLUDED = excluded_tasks(None)
PROV = {"backend": "rules", "model": None, "code_version": "t"}


def question(i: int, abbrev="ASD", task="Active_Speaker_Detection", **extra):
    opts = [{"letter": ltr, "text": f"Person {n} of q{i}", "origin": "rule"} for n, ltr in enumerate("ABC", 1)]
    return {"question_id": f"q{i:015x}", "video_id": f"clip{i // 3}", "task": task, "abbrev": abbrev, "status": "draft",
            "question": f"Who speaks in clip {i // 3}?", "options": opts, "answer": "B", "answer_text": opts[1]["text"],
            "marking": {"kind": "numbers"}, "clip_sha256": f"sha{i // 3}", "target_track_ids": [i % 3],
            "annotation_ids": [], "label_rows": [{"table": "faces"}], "rule_params": {"target": i % 3}, **extra}


def warehouse(tmp_path, n=12) -> tuple[Warehouse, list[dict]]:
    wh = Warehouse(tmp_path / "wh.duckdb")
    qs = [question(i) for i in range(n)]
    wh.replace_many(QUESTIONS, _by_clip(qs))
    return wh, qs


def _by_clip(qs):
    out: dict[tuple, list] = {}
    for q in qs:
        out.setdefault((q["video_id"], q["task"]), []).append(q)
    return [({"video_id": v, "task": t}, rows) for (v, t), rows in out.items()]


def decide(wh, q, who, action="accept", **kw):
    return record_decision(wh, q, who, action, blind_choice="B", content_hash=question_content_hash(q), **kw)


def full(wh) -> list[dict]:
    s = load_state(wh)
    return curate(s["questions"], s["decisions"], EXCLUDED, s["assignments"], s["annotations"])


def test_live_state_equals_a_full_recomputation_after_each_change(tmp_path):
    wh, qs = warehouse(tmp_path)
    live = LiveState(EXCLUDED)
    assert live.refresh(wh).reviewed == full(wh)
    decide(wh, qs[0], "ann")
    decide(wh, qs[1], "ann")
    decide(wh, qs[1], "bob", "reject", reason="ambiguous")  # disputed
    snap = live.refresh(wh)
    assert snap.reviewed == full(wh) and {snap.states[qs[1]["question_id"]]["state"]} == {"disputed"}
    decide(wh, qs[2], "cai")
    assert live.refresh(wh).reviewed == full(wh)
    assert live.loads["questions"] == 1 and live.loads["decisions"] == 1  # new decisions read as a delta
    assign(wh, [qs[2]["question_id"]], ["ann", "cai"])
    assert live.refresh(wh).reviewed == full(wh)
    # a clip's questions regenerated with new text: the decision on q0 no longer applies
    changed = [{**q, "question": q["question"] + " (new)"} for q in qs[:3]]
    wh.replace(QUESTIONS, {"video_id": "clip0", "task": qs[0]["task"]}, changed)
    snap = live.refresh(wh)
    assert snap.reviewed == full(wh) and snap.states[qs[0]["question_id"]]["state"] == "unreviewed"
    assert snap.hashes[qs[0]["question_id"]] == question_content_hash(changed[0])
    # a clip's questions replaced by fewer (a count that shrinks is read whole)
    wh.replace(QUESTIONS, {"video_id": "clip1", "task": qs[3]["task"]}, [qs[3]])
    snap = live.refresh(wh)
    assert snap.reviewed == full(wh) and qs[4]["question_id"] not in snap.by_id and live.loads["questions"] == 2
    # an annotation on a clip: HC question built from it; two annotators agreeing make it not_reviewed
    hc = question(40, abbrev="HC", task="Human_Count", annotation_ids=["a1"], answer_text="4")
    wh.replace(QUESTIONS, {"video_id": hc["video_id"], "task": hc["task"]}, [hc])
    t = dt.datetime(2026, 1, 1)
    wh.replace(ANNOTATIONS, {"annotation_id": "a1"}, [{"video_id": hc["video_id"], "kind": "count", "track_id": None,
                                                       "value": {"count": 4}, "annotator": "ann", "created_at": t}])
    assert live.refresh(wh).states[hc["question_id"]]["state"] == "unreviewed"
    wh.replace(ANNOTATIONS, {"annotation_id": "a2"}, [{"video_id": hc["video_id"], "kind": "count", "track_id": None,
                                                       "value": {"count": 4}, "annotator": "bob",
                                                       "created_at": t + dt.timedelta(seconds=1)}])
    snap = live.refresh(wh)
    assert snap.reviewed == full(wh) and snap.states[hc["question_id"]]["state"] == "not_reviewed"
    # a decision taken back (deleted): the count falls, decisions are read whole
    last = wh.rows(REVIEW_DECISIONS, order_by="created_at DESC")[0]
    wh.execute(f'DELETE FROM "{REVIEW_DECISIONS.name}" WHERE decision_id = ?', [last["decision_id"]])
    assert live.refresh(wh).reviewed == full(wh)
    assert live.refresh(wh) is live.refresh(wh)  # nothing changed: the same snapshot, no read but the marks
    s, full_state = live.refresh(wh).state(), load_state(wh)
    ids = lambda rows: [r["question_id"] for r in rows]  # noqa: E731 (the app's rows lack the provenance columns)
    for who in ("ann", "bob", "cai", "dan"):  # the app's queues from the snapshot are the queues from scratch
        assert ids(review_queue(s["questions"], s["decisions"], s["assignments"], EXCLUDED, who, s["annotations"],
                                states=s["states"], hashes=s["hashes"], presorted=True)) == ids(review_queue(
            full_state["questions"], full_state["decisions"], full_state["assignments"], EXCLUDED, who,
            full_state["annotations"]))
        assert adjudication_list(s["questions"], s["decisions"], s["assignments"], EXCLUDED, who,
                                 reviewed=s["reviewed"]) == adjudication_list(
            full_state["questions"], full_state["decisions"], full_state["assignments"], EXCLUDED, who,
            full_state["annotations"])


def test_reviewed_questions_writes_only_what_changed(tmp_path):
    wh, qs = warehouse(tmp_path, n=30)
    first = update_reviewed(wh, EXCLUDED, PROV)
    assert (first.written, first.deleted) == (30, 0)
    before = {r["question_id"]: r["materialized_at"] for r in wh.rows(REVIEWED_QUESTIONS)}
    assert update_reviewed(wh, EXCLUDED, PROV).written == 0  # nothing changed: nothing written
    decide(wh, qs[7], "ann", "reject", reason="frozen_video")
    again = update_reviewed(wh, EXCLUDED, PROV)
    assert (again.written, again.deleted) == (1, 0)
    after = {r["question_id"]: r for r in wh.rows(REVIEWED_QUESTIONS)}
    assert after[qs[7]["question_id"]]["state"] == "rejected"
    assert all(after[q]["materialized_at"] == t for q, t in before.items() if q != qs[7]["question_id"])
    wh.execute('DELETE FROM "questions" WHERE video_id = ?', ["clip2"])  # three questions vanish
    gone = update_reviewed(wh, EXCLUDED, PROV)
    assert (gone.written, gone.deleted) == (0, 3)
    # a new rule version rewrites every row (provenance is compared too)
    assert update_reviewed(wh, EXCLUDED, {**PROV, "code_version": "t2"}).written == 27
    stored = sorted(wh.rows(REVIEWED_QUESTIONS), key=lambda r: r["question_id"])
    expected = sorted(full(wh), key=lambda r: r["question_id"])
    assert [{k: r[k] for k in e} for r, e in zip(stored, expected)] == expected


def test_the_lock_is_released_between_batches_and_moved_inputs_restart(tmp_path):
    wh, qs = warehouse(tmp_path, n=20)
    other = Warehouse(tmp_path / "wh.duckdb", lock_timeout_s=5)  # its own lock file handle, as another process
    seen = []

    def between(n):
        seen.append(other.count(REVIEWED_QUESTIONS))  # would wait (and fail) if the batch still held the lock
        if n == 2 and len(seen) == 2:
            decide(wh, qs[15], "ann", "reject", reason="ambiguous")  # written while the update is under way

    result = update_reviewed(wh, EXCLUDED, PROV, batch_rows=5, between_batches=between)
    assert seen == [5, 10, 15, 20]  # each batch visible to others as soon as it committed
    assert result.restarts == 1 and result.batches == 4  # 2 batches, then a fresh start writing the 10 left
    states = {r["question_id"]: r["state"] for r in wh.rows(REVIEWED_QUESTIONS)}
    assert len(states) == 20 and states[qs[15]["question_id"]] == "rejected"
    assert max(result.lock_s) < 5


def test_many_keys_are_deleted_by_one_statement_with_the_same_meaning(tmp_path):
    spec = TableSpec("pairs", (("a", "VARCHAR"), ("b", "INTEGER"), ("x", "INTEGER")), key=("a", "b"), provenance=False)
    wh = Warehouse(tmp_path / "wh.duckdb")
    wh.replace_many(spec, [({"a": a, "b": b}, [{"x": 1}]) for a in "pq" for b in (1, 2)])
    wh.replace_many(spec, [({"a": None, "b": 1}, [{"x": 9}])])
    wh.replace_many(spec, [({"a": "p", "b": 1}, [{"x": 2}]), ({"a": "q", "b": 2}, []), ({"a": "z", "b": 5}, [{"x": 3}])])
    got = sorted((r["a"] or "", r["b"], r["x"]) for r in wh.rows(spec))
    assert got == [("", 1, 9), ("p", 1, 2), ("p", 2, 1), ("q", 1, 1), ("z", 5, 3)]


def _rescan_pool(items, quotas):
    """The selection as a rescan per pick (the shape of the old loop): the first open item in hash order."""
    remaining = sorted(items, key=lambda it: _tiebreak(it[0]))
    taken = {s: 0 for s in quotas}
    out = set()
    while remaining:
        open_items = [it for it in remaining if taken.get(it[1], 0) < quotas.get(it[1], 0)]
        if not open_items:
            break
        qid, stratum = open_items[0]
        remaining.remove((qid, stratum))
        out.add(qid)
        taken[stratum] += 1
    return out


def test_the_pool_single_pass_selects_what_a_rescan_per_pick_selects():
    rng = random.Random(7)
    for trial in range(30):
        rows = []
        for i in range(rng.randint(5, 80)):
            people = rng.randint(2, 11)
            rows.append({"question_id": f"t{trial}q{i}", "task": "Human_Count", "abbrev": "HC", "video_id": f"c{i}",
                         "state": "accepted", "options": [{"letter": "A", "text": str(people)}], "answer": "A",
                         "answer_text": str(people), "target_track_ids": [], "rule_params": {}})
        target = rng.randint(1, 90)
        settings = PoolSettings(targets={"HC": target})
        decisions = select_pool(rows, settings)
        placed = [(d.question_id, d.stratum) for d in decisions if d.stratum is not None]
        quotas = split_quota(target, settings.strata_weights(TASK_BY_ABBREV["HC"]))
        assert {d.question_id for d in decisions if d.selected} == _rescan_pool(placed, quotas)


def test_what_pages_derive_is_kept_until_something_changes(tmp_path):
    wh, qs = warehouse(tmp_path)
    live = LiveState(EXCLUDED)
    first = live.refresh(wh)
    calls = []
    count = lambda snap: snap.memo("unreviewed", lambda: calls.append(1) or  # noqa: E731
                                   sum(r["state"] == "unreviewed" for r in snap.reviewed))
    assert count(first) == 12 and count(live.refresh(wh)) == 12 and len(calls) == 1  # same snapshot: reused
    decide(wh, qs[0], "ann")
    second = live.refresh(wh)
    assert second is not first and second.version == first.version + 1
    assert count(second) == 11 and len(calls) == 2  # a new decision: a new snapshot, computed again


def test_a_refresh_outside_a_batch_never_waits_for_the_warehouse_while_holding_the_state(tmp_path):
    """The app's handlers hold a warehouse batch and then read the state; a refresh made without a batch (the
    warm-up at start, a page) must take the warehouse first too, or the two wait for each other until the
    warehouse lock times out."""
    import threading
    import time

    wh, qs = warehouse(tmp_path)
    other = Warehouse(tmp_path / "wh.duckdb", lock_timeout_s=5)
    live = LiveState(EXCLUDED)
    inside, errors = threading.Event(), []

    def handler():  # as app.batched: the batch first, then the state
        try:
            with wh.batch():
                inside.set()
                time.sleep(0.5)  # the other refresh starts meanwhile
                live.refresh(wh)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=handler)
    t.start()
    inside.wait(5)
    started = time.monotonic()
    snap = live.refresh(other)  # waited (and failed after 5 s) when it held the state while asking for the lock
    t.join(10)
    assert not errors and time.monotonic() - started < 4 and len(snap.reviewed) == 12
