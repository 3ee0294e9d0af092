"""Blind leakage filter throughput: Q pooled questions (4 options) x M blind models x every option rotation,
asked through MllmClient with no frames against a loopback OpenAI-compatible server with latency L and
concurrency C, against the ideal requests*L/C; then the same filter again, which must send no request.

    .venv/bin/python benchmarks/leakage.py --questions 100 --models 2 --latency 0.2 --concurrency 8
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.mllm_client import ServerProcess  # noqa: E402
from hvbench_assets.core.benchmark.leakage import answer_blind, blind_jobs, leakage_verdicts  # noqa: E402
from hvbench_assets.core.mllm import MllmClient, parse_registry  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402


def questions(n: int) -> list[dict]:
    return [{"question_id": f"q{i:05d}", "task": "Emotion_Recognition", "question": f"Question {i}: how does the "
             "person in the red box feel?", "answer": "B",
             "options": [{"letter": "ABCD"[k], "text": f"feeling {k} of item {i}"} for k in range(4)]}
            for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8, help="in-flight requests per model")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(args.latency) as server:
        names = [f"blind{m}" for m in range(args.models)]
        reg = parse_registry({"models": {n: {"model_id": n, "base_url": server.base_url,
                                             "max_concurrency": args.concurrency} for n in names}}, environ={})
        wh = Warehouse(Path(tmp) / "wh.duckdb")
        jobs = blind_jobs(questions(args.questions), names, all_rotations=True)
        client = MllmClient(reg, wh)
        t0 = time.perf_counter()
        rows = answer_blind(client, jobs)
        wall = time.perf_counter() - t0
        verdicts = leakage_verdicts(rows)
        sent = server.request_count
        ideal = len(jobs) * args.latency / (args.concurrency * args.models)
        print(f"{args.questions} questions x {args.models} model(s) x 4 rotations = {len(jobs)} blind requests "
              f"({len(jobs) / args.questions:.0f} per question), latency {args.latency}s, concurrency "
              f"{args.concurrency} per model")
        print(f"first run : {wall:.2f}s wall, {len(jobs) / wall:.1f} req/s; ideal {ideal:.2f}s "
              f"({len(jobs) / ideal:.1f} req/s): {ideal / wall:.0%} of ideal; requests sent {sent}; "
              f"{len(verdicts)} verdicts, {sum(v.removed for v in verdicts)} removed")
        t1 = time.perf_counter()
        again = answer_blind(MllmClient(reg, wh), jobs)  # a new process would start the same way: cache from the warehouse
        print(f"rerun     : {time.perf_counter() - t1:.2f}s wall, requests sent {server.request_count - sent} "
              f"(all {sum(1 for r in again if r['status'] != 'failed')} answers from model_calls)")


if __name__ == "__main__":
    main()
