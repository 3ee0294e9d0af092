"""Server side of "decision -> next item" in the review app, in one process on a copy of a real warehouse:
the accept as the page used to send it (POST /api/reveal, then POST /api/decisions: two round trips, the
warehouse opened for every read and write) against the one-key pick (one POST that stores the accept and answers
with the next item, all through one warehouse connection). The two alternate in rounds, so load on the machine
falls on both.

    PYTHONPATH=. .venv/bin/python benchmarks/review_latency.py --warehouse data/hvbench.duckdb [--questions 60] [--decisions 5] [--rounds 4]

The warehouse needs reviewable questions (after the demo, or a test's two-clip warehouse); they are cloned under
new ids in the copy until the queue holds --questions. The browser-side figure (key press to the next item
painted) comes from hvbench_assets_tests/review/test_browser_keys.py."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from hvbench_assets.core.curation.state import is_question
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.review import app as review_app
from hvbench_assets.review.app import ReviewConfig, create_app


class PerCallWarehouse(Warehouse):
    """The warehouse as the app used it before: every call opens the file (no shared connection)."""

    @contextlib.contextmanager
    def batch(self):
        yield


def clone(wh: Warehouse, total: int) -> int:
    real = [q for q in wh.rows(QUESTIONS) if is_question(q)]
    if not real:
        raise SystemExit("no reviewable question in this warehouse")
    for n in range(max(0, total - len(real))):
        wh.execute('INSERT INTO questions SELECT * REPLACE (? AS question_id) FROM questions WHERE question_id = ?',
                   [f"q{0xbe0000000000000 + n:015x}", real[n % len(real)]["question_id"]])
    return sum(1 for q in wh.rows(QUESTIONS) if is_question(q))


def run(client: TestClient, decisions: int, two_step: bool) -> list[float]:
    times = []
    item = client.get("/api/next/review").json()["item"]
    for _ in range(decisions):
        if item is None:
            break
        t0 = time.perf_counter()
        base = {"question_id": item["question_id"], "content_hash": item["content_hash"]}
        if two_step:
            answer = client.post("/api/reveal", json=base).json()["answer"]
            out = client.post("/api/decisions", json={**base, "action": "accept", "blind_choice": answer}).json()
        else:  # the page sends its pick; here the proposed answer, read once outside the timing
            answer = answers[item["question_id"]]
            out = client.post("/api/decisions", json={**base, "action": "pick", "blind_choice": answer}).json()
        times.append((time.perf_counter() - t0) * 1000)
        item = out["next"]
    return times


answers: dict[str, str] = {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--decisions", type=int, default=5, help="per reviewer and round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        Warehouse(args.warehouse).checkpoint()
        path = Path(tmp) / "wh.duckdb"
        shutil.copy2(args.warehouse, path)
        wh = Warehouse(path)
        n = clone(wh, args.questions)
        answers.update({q["question_id"]: q["answer"] for q in wh.rows(QUESTIONS)})
        cfg = ReviewConfig(warehouse=path, data_dir=Path(tmp), excluded=frozenset())
        review_app.Warehouse = PerCallWarehouse
        old_app = create_app(cfg)
        review_app.Warehouse = Warehouse
        new_app = create_app(cfg)
        figures: dict[str, list[float]] = {}
        for r in range(args.rounds):
            for label, app, two_step in (("reveal + accept, per-call", old_app, True), ("one-key pick, one connection", new_app, False)):
                client = TestClient(app, base_url="http://127.0.0.1")
                client.post("/login", json={"name": f"{'old' if two_step else 'new'}{r}"})
                figures.setdefault(label, []).extend(run(client, args.decisions, two_step))
        print(f"{n} reviewable questions, {len(next(iter(figures.values())))} decisions each "
              "(median ms, decision -> next item):")
        for label, ts in figures.items():
            print(f"  {label:32s} {statistics.median(ts):7.1f}  (min {min(ts):.1f}, max {max(ts):.1f})")
        old, new = (statistics.median(v) for v in figures.values())
        print(f"  ratio old/new: {old / new:.2f}")


if __name__ == "__main__":
    main()
