"""The two levels of per-video work: raw files from the inbox, and single-shot clips cut from them."""

import warnings

import dagster as dg

raw_videos_partitions = dg.DynamicPartitionsDefinition(name="raw_videos")
videos_partitions = dg.DynamicPartitionsDefinition(name="videos")

# per-clip asset checks (`partitions_def` on a check) are a preview feature of Dagster 1.13, used knowingly (Dagster is
# pinned): without this every process that loads the definitions printed its warning once per check
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec",
                        category=dg.PreviewWarning)
