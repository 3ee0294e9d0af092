"""The CPU of Dagster's event log per stored event: Dagster's SQLite event log (a connection per event) against the
project's instance (hvbench_assets/runtime/instance.py: one open connection per file and process).

Each variant gets a fresh DAGSTER_HOME (no dagster.yaml: Dagster's default storage; the project's dagster.yaml:
`HvbenchInstance`) and runs the same job in this process: 24 partitioned assets with one asset check each, one run
per partition over 8 partitions, so the events are those of a short-clip batch (step start/output/success,
materializations and check evaluations mirrored in the index). Then every asset's latest materialization is read
back, as the UI and the sensors do. Variants alternate over `--repeat` rounds (drift hits both alike).

Run: PYTHONPATH=. .venv/bin/python benchmarks/event_log.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[1]
PARTS = dg.StaticPartitionsDefinition([f"clip{i}" for i in range(8)])
N_ASSETS = 24


def _asset(i: int, dep):
    name = f"a{i:02d}"

    @dg.asset(name=name, partitions_def=PARTS, deps=[dep] if dep else [],
              check_specs=[dg.AssetCheckSpec("rows", asset=name)])
    def _a(context):
        yield dg.MaterializeResult(metadata={"rows": i, "clip": context.partition_key})
        yield dg.AssetCheckResult(check_name="rows", passed=True)

    return _a


def job() -> dg.JobDefinition:
    assets, prev = [], None
    for i in range(N_ASSETS):
        prev = _asset(i, prev.key if prev else None)
        assets.append(prev)
    return dg.Definitions(assets=assets, jobs=[dg.define_asset_job("all", selection="*")]).resolve_job_def("all")


def run_variant(name: str, the_job: dg.JobDefinition) -> dict:
    home = Path(tempfile.mkdtemp(prefix=f"hvbench_eventlog_{name}_"))
    if name == "pooled":
        shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    else:
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            storage = type(instance.event_log_storage).__name__
            c0 = time.process_time()
            for key in PARTS.get_partition_keys():
                assert the_job.execute_in_process(instance=instance, partition_key=key).success
            run_cpu = time.process_time() - c0
            events = sum(len(instance.all_logs(r.run_id)) for r in instance.get_runs())
            c1 = time.process_time()
            for i in range(N_ASSETS):
                assert instance.get_latest_materialization_event(dg.AssetKey(f"a{i:02d}")) is not None
            read_cpu = time.process_time() - c1
        return {"storage": storage, "run_cpu": run_cpu, "events": events, "read_cpu": read_cpu}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of both variants, alternating")
    args = ap.parse_args()
    the_job = job()
    run_variant("pooled", the_job)  # warm-up: imports and first compilations count for neither
    results: dict[str, list[dict]] = {"dagster": [], "pooled": []}
    for round_ in range(args.repeat):
        for name in ("dagster", "pooled") if round_ % 2 == 0 else ("pooled", "dagster"):
            r = run_variant(name, the_job)
            results[name].append(r)
            print(f"{name:8s} ({r['storage']}): {r['events']} events, runs' CPU {r['run_cpu']:.2f} s = "
                  f"{r['run_cpu'] / r['events'] * 1000:.2f} ms per event; {N_ASSETS} latest reads {r['read_cpu']:.3f} s",
                  flush=True)
    cpu = {n: sum(r["run_cpu"] for r in rs) for n, rs in results.items()}
    reads = {n: sum(r["read_cpu"] for r in rs) for n, rs in results.items()}
    print(f"\npooled / dagster: runs' CPU {cpu['pooled'] / cpu['dagster']:.2f}x, "
          f"latest-materialization reads {reads['pooled'] / reads['dagster']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
