"""The task steps' run tags with and without the per-run memo of defs/run_tags.py, in one process.

Every task step tags its run with each clip's source (`tag_run(context, clip_source_tags(...))`): without the memo
each clip and step opened the warehouse to read the clip's file and wrote the run's tags again. This runs the 8 short
clips of short_clip_backfill.py as one batch run of `clip_offline_labels_job` in this process with Dagster's
in-process executor (no step forked, so a step's CPU is this process's over its span), alternately with the memo
off (a fresh memo at every call) and on, and prints the CPU seconds of the steps that tag (video_probe and the 16
task steps) and the run tags each run ended with (they must be the same).

Run: PYTHONPATH=. .venv/bin/python benchmarks/run_tags_memo.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clip_job import StepSampler, _fresh_media, ingest  # noqa: E402
from decodes import setup as decode_setup  # noqa: E402
from decodes import step_spans  # noqa: E402
from short_clip_backfill import LENGTHS, make_clips  # noqa: E402


IN_PROCESS = {"execution": {"config": {"in_process": {}}}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hvbench_tagmemo_"))
    try:
        decode_setup(tmp)
        os.environ["HVBENCH_MIN_MOTION"] = "0"
        import dagster as dg

        from hvbench_assets.defs import run_tags
        from hvbench_assets.defs.tasks.assets import TASK_ASSETS

        durations = ingest(make_clips(list(LENGTHS), tmp / "generated"))
        instance = dg.DagsterInstance.get()
        keys = [k for k in instance.get_dynamic_partitions("videos") if k in durations]
        tagging = {"video_probe", *(a.key.to_user_string() for a in TASK_ASSETS)}
        memo = run_tags._run_memo
        sampler = StepSampler()
        cpu: dict[str, list[float]] = {"off": [], "on": []}
        tags: dict[str, dict] = {}
        for r in range(args.repeat):
            for name in ("off", "on")[:: -1 if r % 2 else 1]:
                run_tags._run_memo = memo if name == "on" else (lambda run_id: {"sources": {}, "added": {}})
                _fresh_media(tmp)
                before = {rec.dagster_run.run_id for rec in instance.get_run_records()}
                sampler.run(instance, {"dagster/asset_partition_range_start": keys[0],
                                       "dagster/asset_partition_range_end": keys[-1]}, IN_PROCESS, f"memo {name}",
                            sum(durations.values()))
                run = next(rec.dagster_run for rec in instance.get_run_records() if rec.dagster_run.run_id not in before)
                steps = _step_cpu(instance, run.run_id, sampler)
                cpu[name].append(sum(c for k, c in steps.items() if k in tagging))
                tags[name] = {k: v for k, v in run.tags.items() if k.startswith("hvbench/")}
                print(f"memo {name}: CPU in the tagging steps {cpu[name][-1]:.2f} s, load {os.getloadavg()[0]:.1f}")
        run_tags._run_memo = memo
        sampler.done.set()
        print(f"memo on / off: {sum(cpu['on']) / sum(cpu['off']):.2f}x the tagging steps' CPU; the runs' tags the same: "
              f"{tags['on'] == tags['off']}")
        instance.dispose()
        return 0 if tags["on"] == tags["off"] else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _step_cpu(instance, run_id: str, sampler) -> dict[str, float]:
    return {key: sampler.cpu_at(t1) - sampler.cpu_at(t0) for key, (t0, t1, _) in step_spans(instance, run_id).items()}


if __name__ == "__main__":
    sys.exit(main())
