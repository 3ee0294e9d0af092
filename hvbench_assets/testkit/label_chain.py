"""The offline label chain of one clip, materialized with real resources: what the tests' session cache
(hvbench_assets_tests/real_labels.py) and the speaker-set chain (speakers_set_chain.py, for test and benchmark) run."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from hvbench_assets.defs.labels.audio import audio_tags, transcript, voice_demographics
from hvbench_assets.defs.labels.speakers import speaker_frame_scores, speaker_scores
from hvbench_assets.defs.labels.vision import demographics, human_tracks, human_verdicts, person_count
from hvbench_assets.defs.resources import (
    AudioModelsResource,
    MllmResource,
    SettingsResource,
    VisionResource,
    WarehouseResource,
)

LABELS = [audio_tags, transcript, voice_demographics, human_tracks, person_count, demographics, speaker_frame_scores,
          speaker_scores, human_verdicts]


def resources(root: Path, models_file: str, describer: str = "") -> dict:
    return {"settings": SettingsResource(data_dir=str(root / "data")),
            "warehouse": WarehouseResource(path=str(root / "wh.duckdb")),
            "audio_models": AudioModelsResource(), "vision": VisionResource(),
            "mllm": MllmResource(models_file=models_file, describer_model=describer, backoff_s=0.01, max_attempts=2)}


def materialize(root: Path, key: str, assets, models_file: str | None = None, describer: str = "", ok=True):
    """Materialize `assets` for clip partition `key` against the warehouse under `root`."""
    res = resources(root, models_file or str(root / "no-models.toml"), describer)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [key])
    result = dg.materialize(assets, partition_key=key, resources=res, instance=instance, raise_on_error=False)
    assert result.success is ok, [e.message for e in result.all_events if e.is_failure]
    return result, res["warehouse"].get()
