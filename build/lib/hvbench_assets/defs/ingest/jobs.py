"""Jobs the sensors launch: one per raw file (split into clips) and one per clip (probe + labels)."""

import dagster as dg

from hvbench_assets.defs.ingest.assets import scene_clips, video_probe
from hvbench_assets.defs.partitions import raw_videos_partitions, videos_partitions
from hvbench_assets.scale.gpu import GPU_ASSETS, ray_run_tags

raw_video_job = dg.define_asset_job(
    "raw_video_job",
    selection=dg.AssetSelection.assets(scene_clips),
    partitions_def=raw_videos_partitions,
    description="Split one inbox file into single-shot clips and register them as `videos` partitions",
)

# Every per-clip asset lives in group `labels` or `tasks` (plus the probe): the whole per-clip graph in one run,
# so a clip's questions are rebuilt whenever its labels are. Task families that need a model store `blocked`
# verdicts when none is configured, so they stay in the offline job too.
PER_CLIP = dg.AssetSelection.assets(video_probe) | dg.AssetSelection.groups("labels") | dg.AssetSelection.groups("tasks")
# MLLM-written labels (kind `openai`) need a configured endpoint; without one they would only fail.
MLLM_LABELS = dg.AssetSelection.kind("openai")

clip_labels_job = dg.define_asset_job(
    "clip_labels_job",
    selection=PER_CLIP,
    partitions_def=videos_partitions,
    description="Probe one clip, compute every per-clip label (L1-L11, MLLM descriptions included) and its task questions",
    tags=ray_run_tags(GPU_ASSETS),  # on Ray: the run asks for a GPU in the full profile (scale/gpu.py)
)

clip_offline_labels_job = dg.define_asset_job(
    "clip_offline_labels_job",
    selection=PER_CLIP - MLLM_LABELS,
    partitions_def=videos_partitions,
    description="Probe one clip, compute the labels that need no MLLM endpoint, and its task questions",
    tags=ray_run_tags(GPU_ASSETS),
)
