"""Modality arms: the same item asked with frames + audio (full), frames only, audio only or text only.

Each arm is its own run (the arm is part of the run id, so every arm resumes on its own); the report
compares the arms per task and gives every item a verdict (core/scoring/arms.py).
"""

from __future__ import annotations

from hvbench_assets.core.scoring.arms import ARMS  # named where the report reads them (scoring is below us)


class ArmUnavailable(ValueError):
    """The model cannot take this arm (audio to a model without audio input). The message says why."""


def parse_arms(text: str | None) -> tuple[str, ...]:
    """'full,frames,audio,text' -> a tuple in that order; 'all' = every arm. Unknown names are an error."""
    if not text or not text.strip():
        return ("full",)
    names = [a.strip().lower() for a in text.split(",") if a.strip()]
    if names == ["all"]:
        return ARMS
    bad = [a for a in names if a not in ARMS]
    if bad:
        raise ValueError(f"unknown arm(s) {', '.join(bad)}; choose from {', '.join(ARMS)} (or 'all')")
    return tuple(dict.fromkeys(names))


def arm_unavailable(arm: str, model: str, accepts_audio: bool, audio_setting: str = "auto") -> str | None:
    """Why `model` cannot take `arm`, or None. Only the audio arm needs audio input; the full arm of a
    model without it is its frames-only request (it still runs: it is the plain evaluation)."""
    if arm == "audio" and not accepts_audio:
        return (f"arm 'audio' skipped for {model}: its registry entry does not accept audio "
                f"(set accepts_audio = true in config/models.toml or HVBENCH_MLLM_<NAME>_ACCEPTS_AUDIO=true "
                "if the endpoint takes input_audio parts)")
    if arm == "audio" and audio_setting == "never":
        return f"arm 'audio' skipped for {model}: --audio never sends no soundtrack"
    return None
