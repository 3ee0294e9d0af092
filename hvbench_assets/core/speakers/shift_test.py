"""Is a face's Light-ASD score about *this* sound? The time-shift test behind L7's `verified` method.

Light-ASD rates a face that mouths words under someone else's voice nearly as high as a speaker (it reads "a
mouth moves while a voice is heard"), but a speaker's score depends on the sound's timing: shifted by half a
second, the lips no longer meet the syllables and the score falls. A mouthing face's score does not fall, since
it never followed the syllables. So, per window of the track (`window_s`, half-overlapping), over the frames where
a voice is heard:
- level: the mean score as heard must be above Light-ASD's zero;
- drop: it must exceed the mean score with the sound shifted by -`shift_s` and +`shift_s` by `min_drop`.
A frame is verified when a window holding it passes both and, where the window has pauses in the voice, the face's
mouth rests in them (pauses.py: a face mouthing other words moves as much in the pauses). The test alone does not
catch every mouthing face (one under a voice of similar rhythm drops by up to 0.22 over 4 s); the voice/face class veto (L10 against L3) catches
some of those left, and ASD asks only where the voice's class confirms the speaker's face
(core/tasks/agreement.py). `min_drop` 0.1 is the one value best on both labelled sources of
benchmarks/speaker_accuracy.py (speakers set 12/12 clips, composites 17/20); chosen on one source alone it comes
out 0.15 (speakers: 16/20 on composites) or 0.2 (composites: 10/12 on the speakers set), docs/speakers.md."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hvbench_assets.core.speakers.pauses import has_pauses, moves_in_pauses

SHIFT_S = 0.5  # far enough that lips and syllables no longer meet; near enough that the voice is still heard
WINDOW_S = 6.0  # Light-ASD's longest window: long enough for a stable mean, short enough for turn-taking
MIN_DROP = 0.1
MIN_VOICED = 12  # frames of voice a window needs to be judged (the run rule's length)


@dataclass(frozen=True)
class ShiftTest:
    shift_s: float = SHIFT_S
    window_s: float = WINDOW_S
    min_drop: float = MIN_DROP

    def lags(self, fps: float) -> tuple[int, int, int]:
        """The lags in frames the network scores: as heard, then the sound earlier and later."""
        k = max(1, int(round(self.shift_s * fps)))
        return (0, -k, k)

    def passing(self, lagged: np.ndarray, voice: np.ndarray, fps: float) -> list[tuple[int, int]]:
        """The windows (start, end frame) whose mean score where a voice is heard is positive and drops by more than
        `min_drop` when the sound is shifted. `lagged` is (3, T) in `lags` order."""
        out = []
        for a, b in windows(lagged.shape[1], max(1, int(round(self.window_s * fps)))):
            heard = voice[a:b]
            if heard.sum() < MIN_VOICED:
                continue
            level, *shifted = (float(np.mean(row[a:b][heard])) for row in lagged)
            if level > 0 and level - float(np.mean(shifted)) > self.min_drop:
                out.append((a, b))
        return out

    def verified(self, lagged: np.ndarray, voice: np.ndarray, fps: float,
                 mouth: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Per frame (bool): a window holding it passes (`passing`) and, given the mouth's (motion, seen) per frame,
        its mouth does not move as much in the voice's pauses as under the voice (pauses.py)."""
        out = np.zeros(lagged.shape[1], bool)
        for a, b in self.passing(lagged, voice, fps):
            if mouth is None or not moves_in_pauses(mouth[0][a:b], mouth[1][a:b], voice[a:b]):
                out[a:b] = True
        return out

    def needs_mouth(self, lagged: np.ndarray, voice: np.ndarray, fps: float) -> bool:
        """Whether the pause check can change `verified`: a passing window has pauses enough to be judged."""
        return any(has_pauses(voice[a:b]) for a, b in self.passing(lagged, voice, fps))

    def drops(self, lagged: np.ndarray, voice: np.ndarray) -> tuple[float, float] | None:
        """(level, drop) over the whole track's voiced frames, for reports; None without voice."""
        if not voice.any():
            return None
        level, *shifted = (float(np.mean(row[voice])) for row in lagged)
        return round(level, 3), round(level - float(np.mean(shifted)), 3)


def windows(n: int, size: int) -> list[tuple[int, int]]:
    """Half-overlapping windows covering 0..n; one window when the track is shorter than `size`."""
    if n <= size:
        return [(0, n)]
    hop = max(1, size // 2)
    starts = list(range(0, n - size + 1, hop))
    if starts[-1] + size < n:
        starts.append(n - size)
    return [(a, a + size) for a in starts]
