"""Rows of the audio label tables from a backend and the clip's audio (no Dagster here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE


def status_row(status: str, reason: str) -> dict:
    return {"status": status, "reason": reason}


def speech_gate(tags_row: Mapping[str, Any] | None) -> dict | None:
    """The status row L7-L10 write instead of running, or None when L6 says speech."""
    if not tags_row:
        return status_row("failed", "audio_tags has no row for this clip: materialize audio_tags first")
    if tags_row["status"] == "no_audio":
        return status_row("no_audio", tags_row.get("reason") or "the clip has no audio stream")
    if tags_row["status"] != "ok":
        return status_row(tags_row["status"], f"audio_tags is {tags_row['status']}: {tags_row.get('reason')}")
    if not tags_row["is_speech"]:
        return status_row("no_speech", f"audio_tags found no speech (sound type {tags_row['sound_type']})")
    return None


def tags_row(tagger, audio: np.ndarray) -> dict:
    t = tagger.tag(audio)
    return {
        "status": "ok", "reason": None, "is_speech": t.is_speech, "sound_type": t.sound_type, "tags": t.tags,
        "speech_s": t.speech_s, "speech_segments": [list(s) for s in t.speech_segments],
        "loudness_db": t.loudness_db, "duration_s": round(len(audio) / SAMPLE_RATE, 3),
        "is_music": t.music.is_music, "music_score": t.music.score, "music_s": t.music.music_s,
        "music_segments": t.music.segments, "speech_music_s": t.music.speech_music_s,
        "music_evidence": t.music.evidence,
    }


def transcript_row(transcriber, audio: np.ndarray, speech_segments) -> dict:
    t = transcriber.transcribe(audio, [tuple(s) for s in speech_segments or []])
    reason = t.reason or (None if t.text else "the recogniser returned no words")
    return {"status": t.status, "reason": reason, "language": t.language, "text": t.text, "n_chars": len(t.text),
            "words": t.words, "segments": t.segments, "language_evidence": t.evidence}


def emotion_row(recogniser, audio: np.ndarray) -> dict:
    e = recogniser.recognise(audio)
    return {"status": e.status, "reason": e.reason, "emotion": e.emotion, "score": e.score}


def voice_row(demographer, audio: np.ndarray) -> dict:
    return asdict(demographer.estimate(audio))
