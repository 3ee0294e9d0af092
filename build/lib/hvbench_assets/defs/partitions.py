"""The two levels of per-video work: raw files from the inbox, and single-shot clips cut from them."""

import dagster as dg

raw_videos_partitions = dg.DynamicPartitionsDefinition(name="raw_videos")
videos_partitions = dg.DynamicPartitionsDefinition(name="videos")
