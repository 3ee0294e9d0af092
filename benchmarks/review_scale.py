"""Review at scale: the review app, `reviewed_questions` and `question_pool` on warehouses of 1,000 to 20,000
questions, old code beside new in the same process.

Run: PYTHONPATH=. .venv/bin/python benchmarks/review_scale.py [sizes, default 1000,10000,20000] [--no-old]

Seeding goes through the real table specs and Warehouse writes: questions of 16 task families over clips
(six tasks a clip, 5% waiting for an HC/AST/TSA annotation), their task_candidates verdicts, decisions on 30% of
them (a second reviewer on a tenth of those, some disagreeing), 500 two-reviewer assignments and annotations.
Measured (seconds, median of 5 unless said):
- app: the server starting (its startup until it serves), the first request right after it (the new app reads
  the warehouse in a background thread at start; the request waits for the rest of that read) and, in another
  app, a first request without that warm-up; then every page the review issue names (home, the review page with
  its item, the next-item JSON, stats, adjudication) and the questions list, one question, next annotation;
  the next item, home, stats and adjudication pages also right after a new decision (nothing computed from the
  previous state can be reused then; without a change the pages reuse what they derived from the same state).
  The old app is the review package of commit BASE (git archive) run on the same warehouse;
- reviewed_questions: a run after one new decision, after a clip's questions were regenerated, and with
  nothing changed (the sensor during a backfill), and a first run writing every row; the run time, the
  longest time the warehouse lock was held, and the longest wait of a one-row read from another process;
  old: the previous rebuild (every row recomputed and rewritten, a DELETE per key, one lock throughout);
- question_pool: select_pool + assemble_letters when every question fits the targets (all are selected), wall
  and CPU time, at each size and (rows only) at twice the largest, with the CPU time per question.
At the end every app figure beside the first size's, as a ratio.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import importlib.util
import json
import multiprocessing as mp
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.benchmark.letters import assemble_letters  # noqa: E402
from hvbench_assets.core.benchmark.pool import PoolSettings, select_pool  # noqa: E402
from hvbench_assets.core.tasks.catalog import TASKS  # noqa: E402
from hvbench_assets.core.curation.reviewed import update_reviewed  # noqa: E402
from hvbench_assets.core.curation.state import curate, excluded_tasks  # noqa: E402
from hvbench_assets.core.curation.store import _table_rows, record_decision  # noqa: E402
from hvbench_assets.core.curation.tables import REVIEW_ASSIGNMENTS, REVIEW_DECISIONS, REVIEWED_QUESTIONS  # noqa: E402
from hvbench_assets.core.tasks.store import (ANNOTATIONS, QUESTIONS, TASK_CANDIDATES, question_content_hash,  # noqa: E402
                                             question_id, seed_of)
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402

BASE = "f076959"  # the commit before this work: its review app is the "old" one
EXCLUDED = excluded_tasks(None)
PROV = {"backend": "rules", "model": None, "code_version": "1"}
T0 = dt.datetime(2026, 11, 1)


# -- seeding ------------------------------------------------------------------------------------
def question_rows(n: int) -> tuple[list[dict], list[dict], list[dict]]:
    """`n` questions, their task_candidates verdicts and annotations (rows only)."""
    qrows, cands, anns = [], [], []
    clip = 0
    while len(qrows) < n:
        vid, sha = f"clip{clip:05d}", f"{clip:064x}"
        for k in range(6):
            fam = TASKS[(clip + k * 3) % len(TASKS)]
            qid = question_id(fam.name, sha, [k], "1")
            waiting = fam.annotation is not None and clip % 20 == 0
            opts = [{"letter": ltr, "text": f"{fam.abbrev} option {ltr} for {vid}: a person in a blue shirt raises a hand",
                     "origin": "truth" if i == clip % 4 else "rule"} for i, ltr in enumerate("ABCD")]
            answer = "ABCD"[clip % 4]
            row = {"question_id": qid, "video_id": vid, "task": fam.name, "abbrev": fam.abbrev,
                   "status": "awaiting_annotation" if waiting else "draft", "provisional": False,
                   "target_track_ids": [k], "question": None if waiting else f"In this clip, what does the marked person do? ({fam.abbrev})",
                   "options": [] if waiting else opts, "answer": None if waiting else answer,
                   "answer_text": None if waiting else opts["ABCD".index(answer)]["text"],
                   "video_path": f"media/{vid}/questions/{qid}.mp4", "marking": {"kind": "red_box", "track_ids": [k]},
                   "rule": f"{fam.abbrev.lower()}_rule", "rule_version": "1",
                   "rule_params": {"params": {"min_s": 1.0, "max_people": 4}, "measured": {"people": 3 + clip % 8},
                                   "polarity": ["positive", "neutral", "negative"][clip % 3], "target": [k]},
                   "label_rows": [{"table": t, "video_id": vid, "track_id": k, "code_version": "v3",
                                   "materialized_at": "2026-11-01T00:00:00"} for t in ("human_tracks", "faces", "speech", "emotions")],
                   "call_ids": [f"c{clip:05d}{k}"], "annotation_ids": [], "seed": seed_of(qid) % 2**62, "clip_sha256": sha}
            qrows.append(row)
            cands.append({"video_id": vid, "task": fam.name, "abbrev": fam.abbrev,
                          "status": "awaiting_annotation" if waiting else "selected", "rule": row["rule"], "reason": "",
                          "measured": row["rule_params"]["measured"], "target_track_ids": [k], "question_id": qid})
            if waiting and k % 2 == 0:
                counted = fam.annotation.kind == "count"
                anns.append({"annotation_id": f"a{clip:05d}{k}", "video_id": vid, "kind": fam.annotation.kind,
                             "track_id": None if counted else k, "annotator": "ann",
                             "value": {"count": 4} if counted else {"action": "waves", "start_s": 2},
                             "created_at": T0 + dt.timedelta(seconds=len(anns))})
        for fam in TASKS[:4]:  # rejected verdicts of other tasks
            if fam.name not in {q["task"] for q in qrows[-6:]}:
                cands.append({"video_id": vid, "task": fam.name, "abbrev": fam.abbrev, "status": "rejected",
                              "rule": "people", "reason": "people=1 not in 2..4", "measured": {"people": 1},
                              "target_track_ids": [], "question_id": None})
        clip += 1
    return qrows[:n], cands, anns


def seed(path: Path, n: int) -> list[dict]:
    """`n` questions (and their verdicts, decisions, assignments, annotations) written through Warehouse."""
    wh = Warehouse(path)
    qrows, cands, anns = question_rows(n)
    wh.replace_many(QUESTIONS, [({"video_id": q["video_id"], "task": q["task"]}, [q]) for q in qrows],
                    provenance={"backend": "rules", "model": None, "code_version": "1"})
    wh.replace_many(TASK_CANDIDATES, [({"video_id": c["video_id"], "task": c["task"]}, [c]) for c in cands])
    decisions, i = [], 0
    for j, q in enumerate(qrows):
        if q["status"] == "awaiting_annotation" or j % 10 >= 3:
            continue
        for who in ("ann", "bob") if j % 100 < 3 else ("ann",):
            action = "reject" if (who == "bob" and j % 2) else "accept"
            d = {"question_id": q["question_id"], "video_id": q["video_id"], "task": q["task"], "abbrev": q["abbrev"],
                 "content_hash": question_content_hash(q), "reviewer": who, "blind_choice": q["answer"],
                 "shown_order": ["B", "A", "D", "C"], "action": action, "corrected_answer": None, "corrected_text": None,
                 "reason": "ambiguous" if action == "reject" else None, "reason_text": None,
                 "created_at": T0 + dt.timedelta(seconds=i), "seconds_spent": 12.5, "decision_id": f"d{i:015d}"}
            decisions.append(d)
            i += 1
    wh.replace_many(REVIEW_DECISIONS, [({"decision_id": d["decision_id"]}, [d]) for d in decisions])
    assigned = [q["question_id"] for j, q in enumerate(qrows) if q["status"] != "awaiting_annotation" and j % 10 >= 3][:250]
    wh.replace_many(REVIEW_ASSIGNMENTS, [({"question_id": q, "reviewer": r}, [{"role": "review", "assigned_at": T0}])
                                         for q in assigned for r in ("ann", "bob")])
    if anns:
        wh.replace_many(ANNOTATIONS, [({"annotation_id": a["annotation_id"]}, [a]) for a in anns])
    update_reviewed(wh, EXCLUDED, PROV)
    wh.checkpoint()
    return qrows


# -- timing helpers -------------------------------------------------------------------------------
HOLDS: list[float] = []


def _install_lock_timer() -> None:
    """Every warehouse lock hold in this process is appended to HOLDS (seconds)."""
    orig = Warehouse._file_lock

    @contextlib.contextmanager
    def timed(self):
        with orig(self) as deadline:
            t0 = time.perf_counter()
            try:
                yield deadline
            finally:
                HOLDS.append(time.perf_counter() - t0)

    Warehouse._file_lock = timed


def _reader(path: str, stop, out) -> None:
    """Another process reading one row every 50 ms: its longest wait."""
    wh, worst = Warehouse(path), 0.0
    while not stop.is_set():
        t0 = time.perf_counter()
        wh.query('SELECT question_id FROM "questions" LIMIT 1')
        worst = max(worst, time.perf_counter() - t0)
        time.sleep(0.05)
    out.put(worst)


@contextlib.contextmanager
def reader_wait(path: Path):
    ctx = mp.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    p = ctx.Process(target=_reader, args=(str(path), stop, out))
    p.start()
    time.sleep(2.0)  # the reader is importing and reading before the clock starts
    box: dict = {}
    try:
        yield box
    finally:
        stop.set()
        box["wait"] = out.get(timeout=60)
        p.join(timeout=30)


def timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds of fn(); CPU: this process's, the app's threads included (steadier on a shared machine)."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def medians(runs) -> tuple[float, float]:
    runs = list(runs)
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def median_time(fn, repeat: int) -> tuple[float, float]:
    return medians(timed(fn) for _ in range(repeat))


# -- the app --------------------------------------------------------------------------------------
def old_app_module(tmp: Path):
    """The review package of BASE, extracted and imported under another name (it imports today's core)."""
    try:
        data = subprocess.run(["git", "-C", str(ROOT), "archive", BASE, "hvbench_assets/review"], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    out = tmp / "old"
    out.mkdir(exist_ok=True)
    tar = tmp / "old.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    spec = importlib.util.spec_from_file_location("old_review_app", out / "hvbench_assets/review/app.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_review_app"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


PAGES = {  # figure -> URL (qid: a question's id); every page the review issue names, and the JSON the browser uses
    "next item (API)": "/api/next/review",
    "review page (item)": "/review",
    "home page": "/",
    "stats page (/agreement)": "/agreement",
    "adjudication page": "/adjudicate",
    "next adjudication (API)": "/api/next/adjudicate",
    "next annotation (API)": "/api/next/annotate",
    "questions list": "/questions?state=unreviewed",
    "one question page": "/questions/{qid}",
}
CHANGED = ("next item (API)", "home page", "stats page (/agreement)", "adjudication page")  # also timed after a decision


def measure_app(module, path: Path, data: Path, qrows: list[dict], repeat: int) -> dict[str, tuple[float, float]]:
    """Seconds per figure. Start: the server's startup (lifespan) until it serves, then the first request at once
    (the new app reads the warehouse in the background meanwhile: the request waits for the rest of that read),
    and, in a second app, a first request made without that warm-up (the read happens in the request)."""
    from starlette.testclient import TestClient

    from hvbench_assets.review.identity import NAME_COOKIE  # the old app's too

    cfg = module.ReviewConfig(warehouse=path, data_dir=data, excluded=EXCLUDED)
    wh = Warehouse(path)
    out = {}
    cold = TestClient(module.create_app(cfg), base_url="http://127.0.0.1")  # no `with`: no startup, no warm-up
    cold.cookies.set(NAME_COOKIE, "cai")
    out["first request, no warm-up (reads all)"] = timed(lambda: cold.get("/api/next/review").raise_for_status())
    cold.close()
    del cold
    gc.collect()  # each app's state gone before the next reads its own: it is alone in a real server
    warm_app = module.create_app(cfg)
    if module.__name__ != "old_review_app":  # the new app: how long the background read takes, and a request after it
        t0, c0 = time.perf_counter(), time.process_time()
        with TestClient(warm_app, base_url="http://127.0.0.1") as client:
            warm_app.state.warmed.wait(120)
            out["warm-up at start (background, no request)"] = (time.perf_counter() - t0, time.process_time() - c0)
            client.cookies.set(NAME_COOKIE, "cai")
            out["first request after the warm-up"] = timed(lambda: client.get("/api/next/review").raise_for_status())
    del warm_app
    gc.collect()

    app = module.create_app(cfg)
    t0, c0 = time.perf_counter(), time.process_time()
    with TestClient(app, base_url="http://127.0.0.1") as client:
        out["start until serving"] = (time.perf_counter() - t0, time.process_time() - c0)
        client.cookies.set(NAME_COOKIE, "cai")
        out["first request right after start"] = timed(lambda: client.get("/api/next/review").raise_for_status())
        warmed = getattr(app.state, "warmed", None)
        if warmed is not None:
            warmed.wait(120)

        def get(url):
            r = client.get(url.format(qid=qrows[1]["question_id"]))
            assert r.status_code == 200, (url, r.status_code, r.text[:300])
            return r

        targets = iter(q for q in qrows if q["answer"])

        def after_decision(url):
            q = next(targets)
            record_decision(wh, q, "dan", "accept", blind_choice=q["answer"], content_hash=question_content_hash(q))
            return timed(lambda: get(url))

        for name in CHANGED:
            get(PAGES[name])
            out[f"{name}, after a decision"] = medians(after_decision(PAGES[name]) for _ in range(repeat))
        for name, url in PAGES.items():
            get(url)
            out[name] = median_time(lambda: get(url), repeat)  # noqa: B023 (called at once)
    return out


# -- reviewed_questions ---------------------------------------------------------------------------
class PerKeyWarehouse(Warehouse):
    """Warehouse writes as before this work: one DELETE statement per replaced key."""

    def _apply(self, con, spec, keys, values):
        where = " AND ".join(f'"{k}" = ?' for k in spec.key)
        for key in keys:
            con.execute(f'DELETE FROM "{spec.name}" WHERE {where}', key)
        super()._apply(con, spec, [], values)


def old_rebuild(wh: Warehouse) -> list[dict]:
    """rebuild_reviewed of BASE: everything recomputed and rewritten under one lock."""
    result: list[dict] = []

    def build(con):
        rows = curate(_table_rows(con, QUESTIONS), _table_rows(con, REVIEW_DECISIONS), EXCLUDED,
                      _table_rows(con, REVIEW_ASSIGNMENTS), _table_rows(con, ANNOTATIONS))
        con.execute(f'DELETE FROM "{REVIEWED_QUESTIONS.name}"')
        result.extend(rows)
        return [(REVIEWED_QUESTIONS, {"question_id": r["question_id"]}, [r], PROV) for r in rows]

    wh.read_then_replace([REVIEWED_QUESTIONS], build)
    return result


def measure_reviewed(path: Path, qrows: list[dict], old: bool) -> dict[str, tuple[float, float, float]]:
    """scenario -> (run seconds, longest lock hold, longest wait of another process's one-row read)."""
    wh = Warehouse(path)
    out = {}

    def run(name, fn, prepare=None):
        if prepare:
            prepare()
        with reader_wait(path) as box:
            HOLDS.clear()
            t0 = time.perf_counter()
            fn()
            took = time.perf_counter() - t0
            held = max(HOLDS, default=0.0)
        out[name] = (took, held, box["wait"])

    new = lambda: update_reviewed(wh, EXCLUDED, PROV)  # noqa: E731
    q = next(q for q in qrows[5:] if q["answer"])
    one_decision = lambda: record_decision(wh, q, "eve", "accept", blind_choice=q["answer"],  # noqa: E731
                                           content_hash=question_content_hash(q))
    clip = qrows[12]["video_id"]

    def regenerate():
        rows = [{**r, "question": r["question"] + " (regenerated)"} if r["question"] else r
                for r in qrows if r["video_id"] == clip]
        wh.replace_many(QUESTIONS, [({"video_id": r["video_id"], "task": r["task"]}, [r]) for r in rows], provenance=PROV)

    run("new: one new decision", new, one_decision)
    run("new: a clip's questions regenerated", new, regenerate)
    run("new: nothing changed", new)
    run("new: first run (every row written)", new, lambda: wh.execute(f'DELETE FROM "{REVIEWED_QUESTIONS.name}"'))
    if old:
        run("old: one new decision", lambda: old_rebuild(PerKeyWarehouse(path)), one_decision)
    return out


# -- question_pool --------------------------------------------------------------------------------
def measure_pool(qrows: list[dict], repeat: int = 3) -> tuple[float, float]:
    """(wall, CPU) seconds of select_pool + assemble_letters, the median of `repeat` runs; CPU time is steadier
    on a machine shared with other jobs."""
    rows = [{**q, "state": "accepted"} for q in qrows if q["answer"]]
    settings = PoolSettings(targets={t.abbrev: len(rows) for t in TASKS},
                            weights={"HC": (("3-5", 1), ("6-8", 1), ("9+", 1))})
    runs = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        decisions = select_pool(rows, settings)
        chosen = {d.question_id for d in decisions if d.selected}
        assemble_letters([r for r in rows if r["question_id"] in chosen])
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def _ms(x: tuple[float, float]) -> str:
    return f"{x[0] * 1000:6.0f}/{x[1] * 1000:<5.0f}"


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sizes = [int(s) for s in (args[0] if args else "1000,10000,20000").split(",")]
    with_old = "--no-old" not in sys.argv
    _install_lock_timer()
    tmp = Path(tempfile.mkdtemp(prefix="review-scale-"))
    try:
        from hvbench_assets.review import app as new_app

        old_app = old_app_module(tmp) if with_old else None
        results = {}
        for n in sizes:
            path = tmp / f"wh{n}.duckdb"
            t0 = time.perf_counter()
            qrows = seed(path, n)
            print(f"\n== {n} questions (seeded in {time.perf_counter() - t0:.1f} s)", flush=True)
            r: dict = {"app new": measure_app(new_app, path, tmp, qrows, repeat=5)}
            if old_app is not None:
                r["app old"] = measure_app(old_app, path, tmp, qrows, repeat=1 if n > 5000 else 3)
            r["reviewed"] = measure_reviewed(path, qrows, old=with_old)
            r["pool"] = measure_pool(qrows)
            results[n] = r
            for k in r["app new"]:
                old = r.get("app old", {}).get(k)
                print(f"  app {k:48s} new {_ms(r['app new'][k])} ms" + (f"   old {_ms(old)} ms" if old else ""))
            for k, (took, held, wait) in r["reviewed"].items():
                print(f"  reviewed_questions {k:38s} run {took:6.2f} s  longest lock {held:5.2f} s  reader waited {wait:5.2f} s")
            print(f"  question_pool select_pool + assemble_letters (all selected): {r['pool'][0]:.2f} s "
                  f"(CPU {r['pool'][1]:.2f} s, {r['pool'][1] / n * 1e6:.0f} us CPU per question)", flush=True)
        pool_only = 2 * sizes[-1]  # rows only, no warehouse: where the pool's curve goes past the largest size
        extra = measure_pool(question_rows(pool_only)[0])
        base, first = results[sizes[0]], sizes[0]
        print(f"\napp, new: wall/CPU ms, median of 5 (x: wall and CPU ratio to {first} questions):")
        print(f"  {'':48s}" + "".join(f"{n:>13d}" for n in sizes) + "".join(f"{'vs ' + str(n):>14s}" for n in sizes[1:]))
        for k in base["app new"]:
            vals = [results[n]["app new"][k] for n in sizes]
            print(f"  {k:48s}" + "".join(f" {_ms(v)}" for v in vals)
                  + "".join(f"  x{v[0] / vals[0][0]:4.1f}/x{v[1] / max(vals[0][1], 1e-9):<4.1f}" for v in vals[1:]))
        print(f"question_pool (CPU s; x: ratio to {first} questions; us CPU per question):")
        for n, (wall, cpu) in [(n, results[n]["pool"]) for n in sizes] + [(pool_only, extra)]:
            print(f"  {n:6d}: wall {wall:6.2f} s  CPU {cpu:6.2f} s  x{cpu / base['pool'][1]:<6.1f} {cpu / n * 1e6:5.0f} us/question"
                  + ("  (rows only)" if n == pool_only else ""))
        print("\njson: " + json.dumps({n: {k: v for k, v in r.items()} for n, r in results.items()}, default=str))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
