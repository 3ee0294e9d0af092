"""Does a face's mouth rest in the voice's pauses? A check of L7's `verified` method beside the time-shift test.

A speaker's mouth moves while their voice is heard and mostly rests in its pauses; a face that mouths other words
under someone's voice (a voice-over, a dubbed or looped sound) moves as much in the pauses as under the voice, since
its motion has nothing to do with this sound. The shift test misses such a face when its syllables happen to meet
the voice's (benchmarks/speaker_accuracy.py: two long faces under other sounds pass it with drops of 0.24-0.3).
So, per window that passes the shift test, where the window holds at least MIN_FRAMES frames of each with the
face's mouth found: the mean mouth motion (lips.py: the mouth region's pixel change from frame to frame) in the
voice's pauses must stay below PAUSE_RATIO of its mean under the voice. A window with too little of either (most
windows of a talking head: the voice is heard nearly throughout) is not judged and keeps the shift test's verdict.

PAUSE_RATIO: the real speakers of the speakers set reach 0.51-0.73 (five tracks with pauses), the mouthing faces of
both sources 0.91-1.94; on the composites every value from 0.7 to 0.9 gives the same verdicts (two false speakers
fewer, the loosely synced front woman of two_people_talking missed twice), on the speakers set every value from
0.7 up changes nothing; 0.8 is the middle of that range (docs/speakers.md)."""

from __future__ import annotations

import numpy as np

PAUSE_RATIO = 0.8
MIN_FRAMES = 12  # frames of voice and of pause a window needs to be judged (the run rule's length)


def pause_ratio(motion: np.ndarray, seen: np.ndarray, voice: np.ndarray) -> float | None:
    """Mean mouth motion in the voice's pauses / under the voice over one window's frames; None when either side
    has fewer than MIN_FRAMES frames with the mouth found, or the mouth never moves under the voice."""
    heard, pause = voice & seen, ~voice & seen
    if heard.sum() < MIN_FRAMES or pause.sum() < MIN_FRAMES:
        return None
    under = float(np.mean(motion[heard]))
    return float(np.mean(motion[pause])) / under if under > 0 else None


def moves_in_pauses(motion: np.ndarray, seen: np.ndarray, voice: np.ndarray, ratio: float = PAUSE_RATIO) -> bool:
    """The window's mouth moves as much in the pauses as under the voice (False when it cannot be judged)."""
    r = pause_ratio(motion, seen, voice)
    return r is not None and r >= ratio


def has_pauses(voice: np.ndarray) -> bool:
    """Whether a window has enough pause frames to be judged at all (before the mouth is read)."""
    return int((~voice).sum()) >= MIN_FRAMES and int(voice.sum()) >= MIN_FRAMES
