"""Evaluation throughput, all in one process against a real OpenAI-compatible HTTP server on 127.0.0.1.

1. eval_responses writes: one `replace` per reply (the first runner) vs batched `replace_many`.
2. End to end: N items with server latency L at concurrency 1 and C, against the ideal N*L/C;
   then a resumed rerun (everything answered: no request may be sent).
3. Option extraction speed on the tested answer styles.

    .venv/bin/python benchmarks/evaluation.py --per-task 12 --latency 0.1 --concurrency 4
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvbench_assets.core.benchmark import load_benchmark  # noqa: E402
from hvbench_assets.core.evaluation import (  # noqa: E402
    EVAL_RESPONSES,
    EvalConfig,
    MllmAnswerer,
    evaluate,
)
from hvbench_assets.core.mllm import MllmClient, parse_registry  # noqa: E402
from hvbench_assets.core.scoring.extraction import extract_option  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402
from hvbench_assets_tests.core.evaluation.bench_factory import make_benchmark  # noqa: E402
from hvbench_assets_tests.core.scoring.test_extraction import EMOTIONS, PARSED, UNPARSED  # noqa: E402
from hvbench_assets_tests.fake_openai_server import FakeOpenAIServer  # noqa: E402


def widen(root: Path, per_task: int) -> None:
    """Repeat each task's items (same videos) until it has `per_task` items with distinct ids."""
    for f in root.glob("*.jsonl"):
        base = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        out = []
        for i in range(per_task):
            row = dict(base[i % len(base)])
            row["Question_id"] = f"{row['Question_id']}_{i}"
            row["Question"] = f"[{i}] {row['Question']}"
            out.append(json.dumps(row))
        f.write_text("\n".join(out) + "\n")


def bench_writes(tmp: Path, n: int = 200) -> None:
    row = {"run_id": "r", "benchmark": "b", "task": "t", "rotation": 0, "response": "A", "letters": ["A", "B"]}
    wh = Warehouse(tmp / "writes.duckdb")
    wh.ensure(EVAL_RESPONSES)
    t0 = time.perf_counter()
    for i in range(n):
        r = {**row, "question_id": str(i)}
        wh.replace(EVAL_RESPONSES, {k: r[k] for k in EVAL_RESPONSES.key}, [r])
    single = time.perf_counter() - t0
    t0 = time.perf_counter()
    for start in range(0, n, 32):
        batch = [{**row, "question_id": f"b{i}"} for i in range(start, min(n, start + 32))]
        wh.replace_many(EVAL_RESPONSES, [({k: r[k] for k in EVAL_RESPONSES.key}, [r]) for r in batch])
    batched = time.perf_counter() - t0
    print(f"writes: {n} rows one by one {single:.2f}s ({1000 * single / n:.1f} ms/row); "
          f"batched by 32 {batched:.2f}s ({1000 * batched / n:.2f} ms/row); speed-up x{single / batched:.1f}")


def bench_end_to_end(tmp: Path, per_task: int, latency: float, concurrency: int) -> None:
    root = tmp / "bench"
    make_benchmark(root)
    widen(root, per_task)
    bench = load_benchmark(root)
    n = len(bench.items)
    with FakeOpenAIServer(responder=lambda req: "The answer is B.", latency_s=latency) as server:
        registry = parse_registry({"models": {"m": {"model_id": "m", "base_url": server.base_url, "max_concurrency": 64}}},
                                  environ={})
        times = {}
        for c in (1, concurrency):
            wh = Warehouse(tmp / f"e2e_{c}.duckdb")
            answerer = MllmAnswerer(MllmClient(registry, wh, max_concurrency=c))
            t0 = time.perf_counter()
            out = evaluate(bench, answerer, wh, EvalConfig(model="m", n_frames=4, concurrency=c), progress=False)
            times[c] = time.perf_counter() - t0
            assert out.answered == n
            print(f"end to end: {n} items, latency {latency}s, concurrency {c}: {times[c]:.2f}s "
                  f"(ideal {n * latency / c:.2f}s, overhead {1000 * (times[c] - n * latency / c) / n:.0f} ms/item)")
        print(f"concurrency speed-up x{times[1] / times[concurrency]:.2f} (ideal x{concurrency})")
        before = server.request_count
        t0 = time.perf_counter()
        out = evaluate(bench, answerer, wh, EvalConfig(model="m", n_frames=4, concurrency=concurrency), progress=False)
        resumed = time.perf_counter() - t0
        print(f"resume of a finished run: {resumed:.2f}s, skipped {out.skipped}, requests sent {server.request_count - before}; "
              f"x{times[concurrency] / resumed:.0f} faster than answering")


def bench_extraction(reps: int = 200) -> None:
    replies = [r for r, _, _ in PARSED] + [r for r, _ in UNPARSED]
    t0 = time.perf_counter()
    for _ in range(reps):
        for r in replies:
            extract_option(r, EMOTIONS)
    dt = time.perf_counter() - t0
    print(f"extraction: {reps * len(replies) / dt:,.0f} replies/s over {len(replies)} styles")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-task", type=int, default=12)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_writes(Path(tmp))
        bench_end_to_end(Path(tmp), args.per_task, args.latency, args.concurrency)
        bench_extraction()


if __name__ == "__main__":
    main()
