"""The `evaluation` resource: where benchmarks live and how models are asked (frames, audio, judge).

Environment: HVBENCH_BENCHMARKS_DIR, HVBENCH_BENCHMARK_ROOTS ("name=/path;other=/jsonl_dir|/video_root",
e.g. the published HumanVBench task files and videos), HVBENCH_EVAL_FRAMES, HVBENCH_EVAL_FPS, HVBENCH_EVAL_MAX_SIDE,
HVBENCH_EVAL_AUDIO, HVBENCH_EVAL_ARMS, HVBENCH_EVAL_CIRCULAR, HVBENCH_EVAL_JUDGE, HVBENCH_EVAL_CONCURRENCY,
HVBENCH_EVAL_REPEATS, HVBENCH_HUMAN_BASELINE, HVBENCH_REPORT_ITEM_MAX_UNPARSED, HVBENCH_REPORT_BOOTSTRAP,
HVBENCH_REPORT_BOOTSTRAP_SEED, HVBENCH_REPORT_SLICE_MIN_ITEMS.
A change to any answer setting gives a new run id, so earlier runs stay comparable side by side.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from hvbench_assets.core.evaluation import EvalConfig
from hvbench_assets.defs.resources import env_or


class EvaluationSettings(dg.ConfigurableResource):
    benchmarks_dir: str = ""  # default: <data_dir>/benchmarks; each sub-folder with task JSONL files is a benchmark
    benchmark_roots: str = ""  # extra benchmarks anywhere: "name=/path;name2=/jsonl_dir|/video_root"
    n_frames: int = 8  # evenly spaced frames per video (0 with fps set)
    fps: float = 0.0  # one frame per 1/fps seconds instead of n_frames
    max_side: int = 768
    audio: str = "auto"  # auto | always | never
    arms: str = "full"  # modality arms, e.g. "full,frames,audio,text" (core/evaluation/arms.py)
    circular: bool = False
    judge_model: str = ""
    concurrency: int = 4
    human_baseline: str = ""  # JSON or CSV file of human per-task accuracy
    repeats: int = 1  # runs per model with request seeds 0..repeats-1 (the report averages them)
    max_unparsed_rate: float = 0.1  # the eval_responses check warns above this share of unparsed replies
    item_max_unparsed: float = 0.5  # eval_report: models above this unparsed share are left out of item statistics
    bootstrap: int = 2000  # eval_report: resamples of the clip-clustered intervals and paired comparisons
    bootstrap_seed: int = 0
    slice_min_items: int = 30  # eval_report: demographic slices with fewer items show their count only

    def stats(self):
        from hvbench_assets.core.scoring.uncertainty import StatsSettings

        return StatsSettings(n_boot=max(1, self.bootstrap), seed=self.bootstrap_seed,
                             slice_min_items=max(1, self.slice_min_items))

    def roots(self, data_dir: str) -> dict[str, tuple[Path, Path | None]]:
        """Benchmark name -> (folder, video root or None): sub-folders of benchmarks_dir holding *.jsonl,
        then the explicit roots."""
        base = Path(self.benchmarks_dir or Path(data_dir) / "benchmarks")
        found: dict[str, tuple[Path, Path | None]] = {}
        if base.is_dir():
            # hidden folders are an export being written or the one it replaces (core/benchmark/export.py)
            found = {p.name: (p, None) for p in sorted(base.iterdir())
                     if p.is_dir() and not p.name.startswith(".") and any(p.rglob("*.jsonl"))}
        for part in self.benchmark_roots.split(";"):
            if "=" in part:
                name, paths = part.split("=", 1)
                folder, _, videos = paths.partition("|")
                found[name.strip()] = (Path(folder.strip()), Path(videos.strip()) if videos.strip() else None)
        return found

    def configs_for(self, model: str) -> list[EvalConfig]:
        """One config per run: a single unseeded run, or seeds 0..repeats-1, for every arm."""
        from hvbench_assets.core.evaluation.arms import parse_arms

        seeds = list(range(self.repeats)) if self.repeats > 1 else [None]
        return [EvalConfig(model=model, n_frames=None if self.fps else (self.n_frames or 8), fps=self.fps or None,
                           max_side=self.max_side, audio=self.audio, circular=self.circular,
                           judge_model=self.judge_model or None, concurrency=self.concurrency, seed=seed, arm=arm)
                for seed in seeds for arm in parse_arms(self.arms)]


def build_evaluation_resource() -> EvaluationSettings:
    return EvaluationSettings(
        benchmarks_dir=env_or("HVBENCH_BENCHMARKS_DIR", ""),
        benchmark_roots=env_or("HVBENCH_BENCHMARK_ROOTS", ""),
        n_frames=env_or("HVBENCH_EVAL_FRAMES", 8),
        fps=env_or("HVBENCH_EVAL_FPS", 0.0),
        max_side=env_or("HVBENCH_EVAL_MAX_SIDE", 768),
        audio=env_or("HVBENCH_EVAL_AUDIO", "auto"),
        arms=env_or("HVBENCH_EVAL_ARMS", "full"),
        circular=os.environ.get("HVBENCH_EVAL_CIRCULAR", "").strip().lower() in ("1", "true", "yes"),
        judge_model=env_or("HVBENCH_EVAL_JUDGE", ""),
        concurrency=env_or("HVBENCH_EVAL_CONCURRENCY", 4),
        human_baseline=env_or("HVBENCH_HUMAN_BASELINE", ""),
        repeats=env_or("HVBENCH_EVAL_REPEATS", 1),
        item_max_unparsed=env_or("HVBENCH_REPORT_ITEM_MAX_UNPARSED", 0.5),
        bootstrap=env_or("HVBENCH_REPORT_BOOTSTRAP", 2000),
        bootstrap_seed=env_or("HVBENCH_REPORT_BOOTSTRAP_SEED", 0),
        slice_min_items=env_or("HVBENCH_REPORT_SLICE_MIN_ITEMS", 30),
    )


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources={"evaluation": build_evaluation_resource()})
