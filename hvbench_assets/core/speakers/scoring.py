"""One L7 row per track: scores from a backend, the run rule and the veto (no Dagster here)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.speakers import rules


class SpeakerScorer(Protocol):
    backend: str
    model: str

    def score(self, frames_bgr, audio: np.ndarray, fps: float) -> np.ndarray: ...


def track_audio(clip_audio: np.ndarray, first_frame: int, n_frames: int, fps: float) -> np.ndarray:
    """The clip's 16 kHz audio under a track's frames, starting at its first frame's real time."""
    a = int(round(first_frame / fps * SAMPLE_RATE))
    b = int(round((first_frame + n_frames) / fps * SAMPLE_RATE))
    seg = clip_audio[a:b]
    return np.pad(seg, (0, max(0, b - a - len(seg))))


def track_row(
    scorer: SpeakerScorer, frames_bgr, clip_audio: np.ndarray, fps: float, first_frame: int,
    min_run: int = rules.DEFAULT_MIN_RUN, voice: rules.PersonClass | None = None,
    face: rules.PersonClass | None = None, veto_min_confidence: float = 0.7,
) -> dict:
    n = len(frames_bgr)
    scores = scorer.score(frames_bgr, track_audio(clip_audio, first_frame, n, fps), fps)
    summary = rules.summarise(scores, min_run)
    veto_reason = rules.veto(voice, face, veto_min_confidence) if summary["raw_speaking"] else None
    return {
        "status": "ok", "reason": None, "fps": fps, "first_frame": first_frame, "n_frames": n,
        "scores": [float(s) for s in scores], **summary, "min_run": min_run,
        "speaking": bool(summary["raw_speaking"] and veto_reason is None), "veto_reason": veto_reason,
        "voice_class": voice.label if voice else None, "face_class": face.label if face else None,
    }
