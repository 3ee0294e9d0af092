"""L6 audio tags: what kind of sound a clip holds, and whether it contains speech."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hvbench_assets.core.audio import audioset, features, vad
from hvbench_assets.core.audio.music import MusicDetector, MusicResult
from hvbench_assets.core.audio.weights import HubModelPair
from hvbench_assets.core.media import SAMPLE_RATE

SPEECH, SILENCE, OTHER, MUSIC, SINGING = "speech", "silence", "other_sound", "music", "singing"


@dataclass(frozen=True)
class MusicTags:
    """Music alongside speech: a clip can be speech over music."""

    is_music: bool = False
    score: float = 0.0  # offline: share of the clip's time with music (either detector); AST: best music score
    music_s: float = 0.0
    segments: list[tuple[float, float]] = field(default_factory=list)
    speech_music_s: float = 0.0  # seconds of speech during which music plays (rap over a beat, singing)
    evidence: dict = field(default_factory=dict)  # the detector's own: {"method", ...}


def music_tags(result: MusicResult, speech_segments, min_music_s: float = 1.0, min_share: float = 0.2,
               score: float | None = None, is_music: bool | None = None) -> MusicTags:
    """MusicTags from a music detector's timing (and, with AST, the model's own score and decision)."""
    found = result.music_s >= min_music_s and result.share >= min_share if is_music is None else is_music
    return MusicTags(bool(found), round(result.share if score is None else score, 4), result.music_s,
                     [list(s) for s in result.segments], result.overlap_s(speech_segments), dict(result.evidence))


@dataclass(frozen=True)
class AudioTags:
    tags: list[dict]  # [{"label", "score"}], best first
    is_speech: bool
    sound_type: str  # the top tag
    speech_s: float  # seconds judged as speech
    speech_segments: list[tuple[float, float]] = field(default_factory=list)
    loudness_db: float | None = None  # median frame loudness, dBFS
    music: MusicTags = field(default_factory=MusicTags)


class AudioTagger(Protocol):
    backend: str
    model: str

    def tag(self, audio: np.ndarray) -> AudioTags: ...


@dataclass
class VadEnergyTagger:
    """Offline: silero-vad per 32 ms chunk plus loudness → time shares of speech / silence / other
    sound. Scores are those shares, so they say how much of the clip each class covers. Music is an
    overlay on those classes from `music_detector` (YAMNet's AudioSet scores, core.audio.yamnet, or the
    signal-processing detector, core.audio.music): its tag's score is its own time share (singing, a
    part of music, gets its own tag when the detector tells it apart), and a clip can be speech and
    music at once."""

    speech_threshold: float = 0.5
    silence_db: float = -50.0  # absolute floor: quieter chunks are silence
    min_speech_s: float = 0.5  # total speech needed to call the clip speech
    min_speech_share: float = 0.1  # ... and its share of the non-silent time
    backend: str = "offline"
    music_detector: MusicDetector = field(default_factory=MusicDetector)  # or yamnet.YamnetMusicDetector

    @property
    def model(self) -> str:
        return f"silero-vad onnx + loudness; music: {self.music_detector.model}"

    def tag(self, audio: np.ndarray) -> AudioTags:
        if len(audio) < vad.CHUNK:
            return AudioTags([{"label": SILENCE, "score": 1.0}, {"label": MUSIC, "score": 0.0}], False, SILENCE, 0.0, [], None)
        probs = vad.speech_probabilities(audio)
        loud = features.rms_db(audio, vad.CHUNK, vad.CHUNK)[: len(probs)]
        speech = probs >= self.speech_threshold
        silent = (loud < self.silence_db) & ~speech
        other = ~speech & ~silent
        n = len(probs)
        shares = {SPEECH: speech.sum() / n, SILENCE: silent.sum() / n, OTHER: other.sum() / n}
        segments = vad.speech_segments(probs, self.speech_threshold)
        speech_s = float(sum(b - a for a, b in segments))
        audible = max(1, int((~silent).sum()))
        is_speech = speech_s >= self.min_speech_s and speech.sum() / audible >= self.min_speech_share
        music = music_tags(self.music_detector.detect(audio), segments)
        tags = [{"label": k, "score": round(float(v), 4)} for k, v in sorted(shares.items(), key=lambda kv: -kv[1])]
        tags.append({"label": MUSIC, "score": music.score})
        if "singing_s" in music.evidence:
            singing = min(1.0, music.evidence["singing_s"] / (len(audio) / SAMPLE_RATE))
            tags.append({"label": SINGING, "score": round(singing, 4)})
        top = SPEECH if is_speech else MUSIC if music.is_music else max((SILENCE, OTHER), key=lambda k: shares[k])
        return AudioTags(tags, bool(is_speech), top, round(speech_s, 3), segments, round(float(np.median(loud)), 1),
                         music)


@dataclass
class AstTagger(HubModelPair):
    """Full (the paper's choice): Audio Spectrogram Transformer fine-tuned on AudioSet, via transformers.
    Multi-label sigmoid scores over 527 classes; speech when a speech class scores >= threshold."""

    model_id: str = "MIT/ast-finetuned-audioset-10-10-0.4593"
    speech_threshold: float = 0.3
    top_k: int = 5
    window_s: float = 10.0
    device: str = "auto"  # auto | cpu | cuda | cuda:N (core/devices.py); resolved here, recorded in `model`
    hub_offline: bool = False  # HF_HUB_OFFLINE: fail at once when the weights are not cached
    backend: str = "full"
    model: str = ""
    _loaded: tuple | None = None

    def hub_classes(self) -> tuple:
        from transformers import ASTForAudioClassification, AutoFeatureExtractor

        return AutoFeatureExtractor, ASTForAudioClassification

    def tag(self, audio: np.ndarray) -> AudioTags:
        import torch

        extractor, net = self.load()
        # AST sees ~10 s at a time: tag every window, keep each class's best score
        step = int(self.window_s * SAMPLE_RATE)
        windows = [audio[i : i + step] for i in range(0, max(1, len(audio)), step)]
        windows = [w for w in windows if len(w) >= SAMPLE_RATE // 2] or windows[:1]
        inputs = extractor(windows, sampling_rate=SAMPLE_RATE, return_tensors="pt").to(self.device)
        with torch.no_grad():
            scores = torch.sigmoid(net(**inputs).logits).max(dim=0).values.cpu().numpy()
        labels = net.config.id2label
        order = np.argsort(scores)[::-1]
        tags = [{"label": labels[int(i)], "score": round(float(scores[i]), 4)} for i in order[: self.top_k]]
        groups = audioset.group_indices(labels)
        speech_score = max((float(scores[i]) for i in groups["speech"]), default=0.0)
        music_score = max((float(scores[i]) for i in groups["music"]), default=0.0)
        is_speech = speech_score >= self.speech_threshold
        # AST is clip-level; the VAD and the offline music detector still give the timing
        segments = vad.speech_segments(vad.speech_probabilities(audio)) if is_speech else []
        music = music_tags(MusicDetector().detect(audio), segments, score=music_score,
                           is_music=music_score >= self.speech_threshold)
        return AudioTags(tags, is_speech, tags[0]["label"], round(sum(b - a for a, b in segments), 3), segments, None,
                         music)
