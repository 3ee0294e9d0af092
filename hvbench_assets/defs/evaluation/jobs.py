"""Jobs that materialize the evaluation assets: what the demo runs (so its evaluation shows in the UI with its
lineage) and what a user launches for one benchmark x model partition or one report."""

import dagster as dg

from hvbench_assets.defs.evaluation.assets import eval_report, eval_responses
from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions, eval_partitions

evaluation_job = dg.define_asset_job(
    "evaluation_job",
    selection=dg.AssetSelection.assets(eval_responses),
    partitions_def=eval_partitions,
    description="Ask one model every item of one benchmark (partition benchmark|model); resumes where it stopped",
)

eval_report_job = dg.define_asset_job(
    "eval_report_job",
    selection=dg.AssetSelection.assets(eval_report),
    partitions_def=eval_benchmarks_partitions,
    description="The report of every evaluated model on one benchmark: scores, charts, item statistics",
)
