"""What starting a run's worker costs: Dagster's `spawn` against hvbench's preloaded fork server.

A real code server (`dagster api grpc` on loopback, hvbench_assets/testkit/code_server.py) serves hvbench's
definitions plus a one-op probe job (hvbench_assets/testkit/run_worker_probe.py); runs of the probe are
launched through it one after the other, as the daemon launches queued runs (DefaultRunLauncher -> StartRun).
Per start method it prints, over the runs after the first (the first also starts the fork server):
- start: seconds from `launch_run` to the probe op's start (the worker's start-up plus Dagster's run start);
- worker CPU: CPU seconds the worker process spent before the op (imports, loading the definitions, instance);
and each as a ratio of spawn's. Modes alternate over `--repeat` rounds (a fresh code server each time), so load
from other processes hits both alike.

Run: PYTHONPATH=. .venv/bin/python benchmarks/run_worker_start.py [--runs 6] [--repeat 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from hvbench_assets.testkit.code_server import code_server, launch_probe  # noqa: E402

MODES = ("spawn", "preloaded")  # the first is the baseline


def one_round(mode: str, runs: int) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="hvbench_run_start_") as tmp:
        home = Path(tmp) / "dagster_home"
        home.mkdir()
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
        with code_server(home, mode, data_dir=Path(tmp) / "data") as (_, instance, context):
            reports = [launch_probe(instance, context) for _ in range(runs + 1)]
    first, rest = reports[0], reports[1:]
    print(f"{mode:10s} first run: start {first['start_s']:.2f} s, worker CPU {first['cpu_s']:.2f} s; then "
          + ", ".join(f"{r['start_s']:.2f}/{r['cpu_s']:.2f}" for r in rest), flush=True)
    return rest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=6, help="runs per code server after the first")
    ap.add_argument("--repeat", type=int, default=2, help="rounds of both modes, interleaved")
    args = ap.parse_args()
    found: dict[str, list[dict]] = {m: [] for m in MODES}
    for i in range(args.repeat):
        for mode in (MODES if i % 2 == 0 else MODES[::-1]):
            found[mode] += one_round(mode, args.runs)
    base = {k: statistics.median(r[k] for r in found[MODES[0]]) for k in ("start_s", "cpu_s")}
    print("\nmedian over the runs after each code server's first (start s / worker CPU s before the op):")
    for mode in MODES:
        start = statistics.median(r["start_s"] for r in found[mode])
        cpu = statistics.median(r["cpu_s"] for r in found[mode])
        print(f"{mode:10s} start {start:5.2f} s ({start / base['start_s']:.2f}x spawn)   "
              f"worker CPU {cpu:5.2f} s ({cpu / base['cpu_s']:.2f}x spawn)   runs {len(found[mode])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
