"""L9 speech emotion: SenseVoice's emotion tag (full); offline there is no bundled model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hvbench_assets.core.audio.sensevoice import SenseVoice


@dataclass(frozen=True)
class SpeechEmotion:
    status: str  # ok | unavailable
    emotion: str | None
    score: float | None  # share of the speech carrying that emotion (SenseVoice gives no probability)
    reason: str | None = None


class EmotionRecogniser(Protocol):
    backend: str
    model: str

    def recognise(self, audio: np.ndarray) -> SpeechEmotion: ...


@dataclass
class SenseVoiceEmotion:
    engine: SenseVoice
    backend: str = "full"

    @property
    def model(self) -> str:
        return self.engine.name

    def recognise(self, audio: np.ndarray) -> SpeechEmotion:
        result = self.engine.recognise(audio)
        if result.emotion is None:
            return SpeechEmotion("ok", "unknown", None, "SenseVoice tagged no known emotion")
        return SpeechEmotion("ok", result.emotion, result.emotion_share)


@dataclass
class NoOfflineEmotion:
    """Offline: no speech-emotion model ships inside a package, and pitch/energy rules would be
    guesses presented as labels, so the row says so instead."""

    backend: str = "offline"
    model: str = "none"

    def recognise(self, audio: np.ndarray) -> SpeechEmotion:
        return SpeechEmotion("unavailable", None, None,
                             "no offline speech-emotion model; run the full profile (SenseVoiceSmall)")
