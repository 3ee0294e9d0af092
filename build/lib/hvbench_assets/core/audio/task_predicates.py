"""Small pure predicates the task layer calls on stored audio rows, so the rules for "this clip has
usable speech" and "this transcript is English" live next to the labels that produce them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# share of the speech time with music under it that still counts as speech; below one half because the
# detector under-counts music beneath loud speech (music under all of it measured 49-67 %, benchmarks/music_detector.py)
MAX_MUSIC_UNDER_SPEECH = 0.4


def is_trusted_english(transcript_row: Mapping[str, Any] | None) -> bool:
    """A transcript row the tasks may read as English: status ok and language en. Offline rows whose
    evidence was too weak carry status low_confidence and language unknown, so they never pass."""
    return bool(transcript_row) and transcript_row.get("status") == "ok" and transcript_row.get("language") == "en"


def speech_for_tasks(audio_tags_row: Mapping[str, Any] | None,
                     max_music_share: float = MAX_MUSIC_UNDER_SPEECH) -> tuple[bool, str]:
    """(usable, reason): true only for speech that is not predominantly music or singing, i.e. music
    plays under less than `max_music_share` of the speech time (songs, rap over a beat fail)."""
    if not audio_tags_row:
        return False, "no audio_tags row"
    if audio_tags_row.get("status") != "ok":
        return False, f"audio_tags status {audio_tags_row.get('status')}"
    if not audio_tags_row.get("is_speech"):
        return False, f"no speech (sound type {audio_tags_row.get('sound_type')})"
    speech_s = float(audio_tags_row.get("speech_s") or 0.0)
    if audio_tags_row.get("is_music") is None:
        return False, "audio_tags predates music detection: rematerialize audio_tags"
    over = float(audio_tags_row.get("speech_music_s") or 0.0)
    share = over / speech_s if speech_s > 0 else 0.0
    if audio_tags_row.get("is_music") and share >= max_music_share:
        return False, f"music or singing under {share:.0%} of the speech ({over:.1f} of {speech_s:.1f} s)"
    return True, f"speech ({speech_s:.1f} s" + (f", music under {share:.0%} of it)" if share else ")")
