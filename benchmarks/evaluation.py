"""Evaluation throughput, all in one process against a real OpenAI-compatible HTTP server on 127.0.0.1.

1. eval_responses writes: one `replace` per reply (the first runner) vs batched `replace_many`.
2. End to end in this process: N items with server latency L at concurrency 1 and C, against the ideal
   N*L/C; then a resumed rerun (everything answered: no request may be sent).
3. The user's path: `hvbench eval` as a new process (imports, warehouse, video decoding and all) on
   --items items at --cli-latency and --cli-concurrency, against N*L/C, with where its start-up goes.
4. Option extraction speed on the tested answer styles.

    .venv/bin/python benchmarks/evaluation.py                 # defaults: the issue's N=78, L=1.0 s, C=8 for part 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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
from hvbench_assets.testkit.bench_factory import make_benchmark  # noqa: E402
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer  # noqa: E402
from hvbench_assets.testkit.reply_styles import EMOTIONS, PARSED, UNPARSED  # noqa: E402


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


def widen_to(root: Path, n_items: int) -> None:
    """Spread `n_items` items over the task files (distinct ids, the same videos)."""
    files = sorted(root.glob("*.jsonl"))
    for k, f in enumerate(files):
        base = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        count = n_items // len(files) + (k < n_items % len(files))
        rows = [{**base[i % len(base)], "Question_id": f"{base[i % len(base)]['Question_id']}_{i}",
                 "Question": f"[{i}] {base[i % len(base)]['Question']}"} for i in range(count)]
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))


STARTUP = """
import sys, time
t0 = time.perf_counter(); marks = []
def mark(name): marks.append((name, time.perf_counter() - t0, time.process_time()))
import hvbench_assets.cli; mark("python + cli module")
from hvbench_assets.core.evaluation import EvalConfig, mllm_answerer; from hvbench_assets.settings_table import model_registry; from hvbench_assets.core.evaluation.runner import Evaluator, _frames
mark("imports: evaluation (numpy, PyAV, OpenCV, DuckDB)")
from hvbench_assets.core.benchmark import load_benchmark
bench = load_benchmark(sys.argv[1]); mark(f"load benchmark + locate {len(bench.items)} videos")
from hvbench_assets.core.warehouse import Warehouse
wh = Warehouse(sys.argv[2]); answerer = mllm_answerer(wh, model_registry(sys.argv[3])); mark("model registry + client")
ev = Evaluator(bench, answerer, wh, EvalConfig(model="m", n_frames=8, concurrency=8)); ev._start(); mark("warehouse: run start (1 transaction)")
_frames(str(bench.items[0].video_path), 8, None, 768); mark("first video: 8 frames decoded")
answerer.warm_up("m"); mark("HTTP client + call-cache index (a thread during a real run)")
prev, prev_cpu = 0.0, 0.0
for name, t, cpu in marks:
    print(f"    {name:58s} {t - prev:5.2f} s wall {cpu - prev_cpu:5.2f} s CPU"); prev, prev_cpu = t, cpu
print(f"    {'in all (CPU includes the interpreter start)':58s} {prev:5.2f} s wall {prev_cpu:5.2f} s CPU")
print(f"CRITICAL_CPU={marks[-2][2]:.3f}")  # everything before the first request but the warm-up thread
"""


def bench_cli(tmp: Path, n_items: int, latency: float, concurrency: int) -> None:
    root = tmp / "cli_bench"
    make_benchmark(root)
    widen_to(root, n_items)
    env = {**os.environ, "HVBENCH_DATA_DIR": str(tmp / "cli_data")}
    with FakeOpenAIServer(responder=lambda req: "B", latency_s=latency) as server:
        models = tmp / "cli_models.toml"
        models.write_text(f'[models.m]\nmodel_id = "m"\nbase_url = "{server.base_url}"\nmax_concurrency = 64\n')
        cmd = [sys.executable, "-m", "hvbench_assets.cli", "eval", "--benchmark", str(root), "--model", "m",
               "--frames", "8", "--concurrency", str(concurrency), "--warehouse", str(tmp / "cli.duckdb"),
               "--models-file", str(models), "--no-progress"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.time() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        assert proc.returncode == 0 and server.request_count == n_items, proc.stderr[-2000:]
        sent = sorted(r.received_at - t0 for r in server.requests)
    ideal = n_items * latency / concurrency
    waves = -(-n_items // concurrency) * latency
    print(f"hvbench eval (new process): {n_items} items, latency {latency}s, concurrency {concurrency}: {wall:.2f}s; "
          f"ideal N*L/C {ideal:.2f}s -> ratio {wall / ideal:.2f}x (whole waves alone: {waves / ideal:.2f}x)")
    print(f"  first request {sent[0]:.2f}s after launch, last {sent[-1]:.2f}s, exit {wall - sent[-1] - latency:.2f}s "
          f"after the last reply; the process used {cpu:.2f}s of CPU in all (on a busy machine the wall-clock "
          "start-up grows with the load average, the CPU figure does not)")
    print("  start-up, step by step (a separate process, same inputs):")
    probe = subprocess.run([sys.executable, "-c", STARTUP, str(root), str(tmp / "probe.duckdb"), str(models)],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    lines = probe.stdout.rstrip().splitlines()
    print("\n".join(line for line in lines if not line.startswith("CRITICAL_CPU=")) or probe.stderr[-2000:])
    critical = [float(line.split("=")[1]) for line in lines if line.startswith("CRITICAL_CPU=")]
    if critical:
        estimate = critical[0] + waves
        print(f"  idle-machine estimate: start-up CPU before the first request {critical[0]:.2f}s + {waves:.0f} whole "
              f"waves = {estimate:.2f}s -> {estimate / ideal:.2f}x N*L/C (what this machine's load adds is not "
              "counted; the measured ratio above is the real one here)")


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
    ap.add_argument("--items", type=int, default=78, help="items of the `hvbench eval` run (part 3)")
    ap.add_argument("--cli-latency", type=float, default=1.0)
    ap.add_argument("--cli-concurrency", type=int, default=8)
    ap.add_argument("--only-cli", action="store_true", help="run part 3 only")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.only_cli:
            bench_writes(Path(tmp))
            bench_end_to_end(Path(tmp), args.per_task, args.latency, args.concurrency)
        bench_cli(Path(tmp), args.items, args.cli_latency, args.cli_concurrency)
        if not args.only_cli:
            bench_extraction()


if __name__ == "__main__":
    main()
