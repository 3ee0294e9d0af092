"""Which runs ask Ray for a GPU.

Runs go to Ray one job per run (RayRunLauncher; docs/scale-out.md has the measurements behind that choice),
and the steps of a run execute in that job's process, so a GPU is a property of the run, not of a step: a run
whose job contains a step that uses a GPU in the `full` profile asks for one GPU (`dagster-ray/config`
`num_gpus`), and Ray starts it only on a node that has one. The offline profile runs everything on CPU and asks
for none. `HVBENCH_RAY_GPU=on|off` overrides the profile (on: the placement can be tried on a machine without
a GPU, as the tests do; off: a full-profile run on CPU nodes).
"""

from __future__ import annotations

import json

from hvbench_assets import settings_table

RAY_CONFIG_TAG = "dagster-ray/config"  # what dagster-ray's launcher and executor read

# Per-clip assets whose full-profile backend runs a torch model (docs/labels.md, backend table): YOLOv8 / RetinaFace
# (human_tracks), DeepFace (demographics), AST (audio_tags), Light-ASD (speaker_frame_scores), SenseVoice (transcript,
# speech_emotion), wav2vec2 (voice_demographics).
GPU_ASSETS = frozenset({"human_tracks", "demographics", "audio_tags", "speaker_frame_scores", "transcript",
                        "speech_emotion", "voice_demographics"})


def gpu_wanted(profile: str | None = None, override: str | None = None) -> bool:
    override = (settings_table.raw("HVBENCH_RAY_GPU") if override is None else override).strip().lower()
    if override in ("on", "off"):
        return override == "on"
    if override not in ("", "auto"):
        raise ValueError(f"HVBENCH_RAY_GPU must be on, off or auto, got {override!r}")
    profile = (settings_table.raw("HVBENCH_BACKEND_PROFILE") if profile is None else profile).strip() or "offline"
    return profile == "full"


def ray_run_tags(asset_names, profile: str | None = None, override: str | None = None) -> dict[str, str]:
    """Run tags for a job that materializes `asset_names`: one GPU when one of them needs it."""
    if gpu_wanted(profile, override) and GPU_ASSETS & set(asset_names):
        return {RAY_CONFIG_TAG: json.dumps({"num_gpus": 1})}
    return {}
