"""L10 voice demographics: wav2vec2 age/gender (full) or a pitch heuristic (offline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hvbench_assets.core.audio import features, vad
from hvbench_assets.core.audio.weights import load_hf_pair
from hvbench_assets.core.media import SAMPLE_RATE

VOICE_CLASSES = ("male", "female", "child")


@dataclass(frozen=True)
class VoiceDemographics:
    status: str  # ok | unavailable
    voice_class: str | None  # male | female | child
    confidence: float | None
    gender_probs: dict = field(default_factory=dict)  # {"male": p, "female": p}
    child_prob: float | None = None
    age_years: float | None = None
    method: str = "model"  # model | heuristic
    pitch_hz: float | None = None  # heuristic only: the baseline (low-percentile) pitch of voiced speech
    segments: list = field(default_factory=list)  # heuristic: per voiced stretch {start_s, end_s, voice_class, ...}
    reason: str | None = None


class VoiceDemographer(Protocol):
    backend: str
    model: str

    def estimate(self, audio: np.ndarray) -> VoiceDemographics: ...


def pitch_class(f0_hz: np.ndarray, male_below: float = 165.0, child_above: float = 290.0) -> np.ndarray:
    """Per-frame class index into VOICE_CLASSES from the fundamental frequency."""
    return np.where(f0_hz < male_below, 0, np.where(f0_hz > child_above, 2, 1))


@dataclass
class PitchDemographer:
    """Offline heuristic from YIN pitch on voiced speech frames. The class comes from the speaker's
    baseline pitch (a low percentile: speakers raise their pitch for emphasis, rarely lower it):
    men mostly below ~165 Hz, women up to ~290 Hz, young children above. The confidence grows with
    the distance (in octaves) from the nearest boundary; frame shares per class are stored too.
    Overlapping ranges (a high-pitched woman, a low child) and mixed voices are the known weakness."""

    male_below: float = 165.0
    child_above: float = 290.0
    baseline_percentile: float = 25.0
    min_voiced_frames: int = 10
    backend: str = "offline"
    model: str = "yin-pitch heuristic"

    min_segment_frames: int = 8  # 160 ms of voicing
    segment_gap_s: float = 0.3

    def voiced_pitch(self, audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(f0 in Hz, time in s) of the voiced speech frames (20 ms steps)."""
        f0, periodicity = features.pitch_yin(audio, threshold=0.3)
        times = np.arange(len(f0)) * (320 / SAMPLE_RATE)
        probs = vad.speech_probabilities(audio)
        # a low VAD gate: shouting children score low with silero but are clearly voiced
        speechy = features.resample_track(probs, vad.VAD_RATE, times + 0.032) >= 0.15
        keep = (f0 >= 70) & (f0 <= 500) & (periodicity >= 0.7) & speechy
        return f0[keep], times[keep]

    def classify(self, f0: np.ndarray) -> tuple[str, float, float]:
        """(class, confidence, baseline pitch) of a set of voiced frames."""
        baseline = float(np.percentile(f0, self.baseline_percentile))
        best = int(pitch_class(np.array([baseline]), self.male_below, self.child_above)[0])
        octaves = min(abs(np.log2(baseline / self.male_below)), abs(np.log2(baseline / self.child_above)))
        confidence = 0.5 + 0.5 * min(1.0, octaves / 0.5)  # half an octave from a boundary: certain
        return VOICE_CLASSES[best], round(float(confidence), 3), round(baseline, 1)

    def segments(self, f0: np.ndarray, times: np.ndarray) -> list[dict]:
        """Runs of voiced frames (gaps under segment_gap_s bridged), each classed on its own:
        a clip where a man talks and then children shout shows both."""
        out, start = [], 0
        for i in range(1, len(times) + 1):
            if i == len(times) or times[i] - times[i - 1] > self.segment_gap_s:
                if i - start >= self.min_segment_frames:
                    label, conf, pitch = self.classify(f0[start:i])
                    out.append({"start_s": round(float(times[start]), 2), "end_s": round(float(times[i - 1]) + 0.02, 2),
                                "voice_class": label, "confidence": conf, "pitch_hz": pitch})
                start = i
        return out

    def estimate(self, audio: np.ndarray) -> VoiceDemographics:
        f0, times = self.voiced_pitch(audio)
        if len(f0) < self.min_voiced_frames:
            return VoiceDemographics("unavailable", None, None, method="heuristic",
                                     reason=f"only {len(f0)} voiced frames; pitch cannot be estimated")
        label, confidence, baseline = self.classify(f0)
        shares = np.bincount(pitch_class(f0, self.male_below, self.child_above), minlength=3) / len(f0)
        adult = shares[0] + shares[1]
        gender = {"male": round(float(shares[0] / adult), 3), "female": round(float(shares[1] / adult), 3)} if adult else {}
        return VoiceDemographics("ok", label, confidence, gender, round(float(shares[2]), 3), None, "heuristic",
                                 baseline, segments=self.segments(f0, times))


def _age_gender_model_class():
    """audeering's age/gender checkpoint stores two small heads next to wav2vec2; transformers has
    no class for it, so it is defined here as on the model card (names must match the state dict)."""
    import torch
    from torch import nn
    from transformers import Wav2Vec2Model, Wav2Vec2PreTrainedModel

    class ModelHead(nn.Module):
        def __init__(self, config, num_labels):
            super().__init__()
            self.dense = nn.Linear(config.hidden_size, config.hidden_size)
            self.dropout = nn.Dropout(config.final_dropout)
            self.out_proj = nn.Linear(config.hidden_size, num_labels)

        def forward(self, x):
            x = self.dropout(x)
            x = torch.tanh(self.dense(x))
            return self.out_proj(self.dropout(x))

    class AgeGenderModel(Wav2Vec2PreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.config = config
            self.wav2vec2 = Wav2Vec2Model(config)
            self.age = ModelHead(config, 1)
            self.gender = ModelHead(config, 3)  # female, male, child
            self.post_init()

        def forward(self, input_values):
            hidden = self.wav2vec2(input_values)[0].mean(dim=1)
            return hidden, self.age(hidden), torch.softmax(self.gender(hidden), dim=1)

    return AgeGenderModel


@dataclass
class Wav2Vec2Demographer:
    """Full (the paper's choice): wav2vec2 fine-tuned for age (0-1 ~ 0-100 years) and
    female / male / child, on the speech part of the clip."""

    model_id: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    device: str = "cpu"
    max_seconds: float = 30.0
    backend: str = "full"
    model: str = ""
    _loaded: tuple | None = None

    def __post_init__(self) -> None:
        self.model = self.model or self.model_id

    def load(self):
        if self._loaded is None:
            from transformers import Wav2Vec2FeatureExtractor

            self._loaded = load_hf_pair(self.model_id, self.device, Wav2Vec2FeatureExtractor, _age_gender_model_class())
        return self._loaded

    def estimate(self, audio: np.ndarray) -> VoiceDemographics:
        import torch

        extractor, net = self.load()
        segments = vad.speech_segments(vad.speech_probabilities(audio))
        speech = np.concatenate([audio[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] for a, b in segments]) if segments else audio
        speech = speech[: int(self.max_seconds * SAMPLE_RATE)]
        inputs = extractor(speech, sampling_rate=SAMPLE_RATE, return_tensors="pt")
        with torch.no_grad():
            _, age, probs = net(inputs["input_values"].to(self.device))
        return demographics_from_outputs(float(age[0, 0]), probs[0].cpu().numpy())


def demographics_from_outputs(age_unit: float, probs_fmc: np.ndarray) -> VoiceDemographics:
    """Map the model's outputs (age in 0..1, probabilities female/male/child) to a row."""
    female, male, child = (float(p) for p in probs_fmc)
    scores = {"male": male, "female": female, "child": child}
    best = max(scores, key=scores.get)
    adult = male + female
    gender = {"male": round(male / adult, 3), "female": round(female / adult, 3)} if adult > 0 else {}
    return VoiceDemographics("ok", best, round(scores[best], 3), gender, round(child, 3),
                             round(age_unit * 100, 1), "model")
