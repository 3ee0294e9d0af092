"""L10 voice demographics: wav2vec2 age/gender (full) or a pitch heuristic (offline).

Both backends produce class probabilities (male / female / child, summing to 1) and pass them
through one decision rule, `decide`: the class is their argmax, the confidence is that class's
probability, and the stored gender and child probabilities are derived from the same numbers,
so a row can never say "male, 1.0" next to "female 0.59"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hvbench_assets.core.audio import features, vad
from hvbench_assets.core.audio.weights import HubModelPair
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
    method: str = "model"  # model | heuristic | mlp+pitch | blend
    pitch_hz: float | None = None  # heuristic only: the baseline (low-percentile) pitch of voiced speech
    segments: list = field(default_factory=list)  # heuristic: per voiced stretch {start_s, end_s, voice_class, ...}
    reason: str | None = None
    class_probs: dict = field(default_factory=dict)  # {"male", "female", "child"}, sum 1: what `decide` read


@dataclass(frozen=True)
class VoiceDecision:
    voice_class: str
    confidence: float
    class_probs: dict  # rounded, sum 1
    gender_probs: dict  # male / female renormalised over the adult classes
    child_prob: float


def decide(class_probs: Mapping[str, float]) -> VoiceDecision:
    """The one rule from class probabilities to a stored row: argmax class, its probability as the
    confidence, gender = the adult probabilities renormalised, child = the child probability."""
    raw = {c: max(0.0, float(class_probs.get(c, 0.0))) for c in VOICE_CLASSES}
    total = sum(raw.values())
    if total <= 0:
        raise ValueError(f"class probabilities must have positive mass: {dict(class_probs)}")
    probs = {c: round(v / total, 3) for c, v in raw.items()}
    best = max(VOICE_CLASSES, key=lambda c: (probs[c], -VOICE_CLASSES.index(c)))  # ties: the first class
    adult = raw["male"] + raw["female"]
    gender = {"male": round(raw["male"] / adult, 3), "female": round(raw["female"] / adult, 3)} if adult > 0 else {}
    return VoiceDecision(best, probs[best], probs, gender, probs["child"])


def rule_violations(row: Mapping[str, Any], tol: float = 2e-3) -> list[str]:
    """Why a stored voice_demographics row breaks the decision rule (empty when it holds)."""
    if row.get("status") != "ok":
        return [] if row.get("voice_class") is None else [f"status {row.get('status')} with a voice_class"]
    probs = row.get("class_probs") or {}
    if set(probs) != set(VOICE_CLASSES):
        return [f"class_probs {probs} does not name {VOICE_CLASSES}"]
    expected = decide(probs)
    problems = []
    if abs(sum(probs.values()) - 1) > tol:
        problems.append(f"class_probs sum to {sum(probs.values()):.3f}")
    if row.get("voice_class") != expected.voice_class:
        problems.append(f"voice_class {row.get('voice_class')} but argmax of {probs} is {expected.voice_class}")
    if abs((row.get("confidence") or 0) - expected.confidence) > tol:
        problems.append(f"confidence {row.get('confidence')} != p({expected.voice_class}) = {expected.confidence}")
    if abs((row.get("child_prob") or 0) - expected.child_prob) > tol:
        problems.append(f"child_prob {row.get('child_prob')} != {expected.child_prob}")
    gender = row.get("gender_probs") or {}
    if any(abs(gender.get(k, -1) - v) > tol for k, v in expected.gender_probs.items()):
        problems.append(f"gender_probs {gender} != {expected.gender_probs}")
    return problems


def _decided(decision: VoiceDecision, **fields) -> VoiceDemographics:
    return VoiceDemographics("ok", decision.voice_class, decision.confidence, decision.gender_probs,
                             decision.child_prob, class_probs=decision.class_probs, **fields)


class VoiceDemographer(Protocol):
    backend: str
    model: str

    def estimate(self, audio: np.ndarray) -> VoiceDemographics: ...


def speech_part(audio: np.ndarray, min_s: float = 0.0) -> np.ndarray:
    """The VAD's speech stretches joined, or the whole audio when they hold less than min_s (or none)."""
    spans = vad.speech_segments(vad.speech_probabilities(audio))
    speech = np.concatenate([audio[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] for a, b in spans]) if spans else audio
    return speech if spans and len(speech) >= min_s * SAMPLE_RATE else audio


def pitch_class(f0_hz: np.ndarray, male_below: float = 165.0, child_above: float = 290.0) -> np.ndarray:
    """Per-frame class index into VOICE_CLASSES from the fundamental frequency."""
    return np.where(f0_hz < male_below, 0, np.where(f0_hz > child_above, 2, 1))


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


@dataclass
class PitchDemographer:
    """Offline heuristic from YIN pitch on voiced speech frames. The clip (and each voiced stretch, kept
    as segments so a man followed by children shows both) is judged by its baseline pitch (a low
    percentile: speakers raise their pitch for emphasis, rarely lower it): men mostly below ~165 Hz,
    women up to ~290 Hz, young children above. Class probabilities are soft steps at those boundaries
    in octaves (half an octave away: ~0.98); `decide` turns them into the row. Short stretches are too
    noisy to average (octave errors), hence the clip-wide baseline. Overlapping ranges (a high woman,
    a low child) and mixed voices are the known weakness."""

    male_below: float = 165.0
    child_above: float = 290.0
    softness_octaves: float = 0.12  # width of the soft step at each boundary
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

    def probabilities(self, f0: np.ndarray) -> tuple[dict, float]:
        """(class probabilities, baseline pitch) of a set of voiced frames."""
        baseline = float(np.percentile(f0, self.baseline_percentile))
        octave = np.log2(baseline)
        male = _sigmoid((np.log2(self.male_below) - octave) / self.softness_octaves)
        child = _sigmoid((octave - np.log2(self.child_above)) / self.softness_octaves)
        return {"male": male, "female": max(0.0, 1.0 - male - child), "child": child}, round(baseline, 1)

    def stretches(self, times: np.ndarray) -> list[tuple[int, int]]:
        """[start, end) frame index runs of voicing (gaps under segment_gap_s bridged) long enough to judge."""
        out, start = [], 0
        for i in range(1, len(times) + 1):
            if i == len(times) or times[i] - times[i - 1] > self.segment_gap_s:
                if i - start >= self.min_segment_frames:
                    out.append((start, i))
                start = i
        return out

    def estimate(self, audio: np.ndarray) -> VoiceDemographics:
        f0, times = self.voiced_pitch(audio)
        if len(f0) < self.min_voiced_frames:
            return VoiceDemographics("unavailable", None, None, method="heuristic",
                                     reason=f"only {len(f0)} voiced frames; pitch cannot be estimated")
        segments = []
        for a, b in self.stretches(times):
            probs, pitch = self.probabilities(f0[a:b])
            d = decide(probs)
            segments.append({"start_s": round(float(times[a]), 2), "end_s": round(float(times[b - 1]) + 0.02, 2),
                             "voice_class": d.voice_class, "confidence": d.confidence, "pitch_hz": pitch})
        probs, baseline = self.probabilities(f0)
        return _decided(decide(probs), method="heuristic", pitch_hz=baseline, segments=segments)


@dataclass
class MlpGenderDemographer:
    """Offline: adult gender from the shipped Keras MLP (core.audio.voice_gender) on the speech part of
    the clip, child from pitch (the MLP knows only adults): p(child) is PitchDemographer's, and the
    adult rest is split by the MLP's male probability. `decide` turns that into the row, as for every
    backend. Voiced stretches (segments) are judged the same way, each on its own audio."""

    pitch: PitchDemographer = field(default_factory=PitchDemographer)
    min_speech_s: float = 0.5  # less speech than this gives the MLP a mel mean of mostly silence
    blend: bool = False  # adult split = mean of the MLP's and the pitch rule's male probability
    backend: str = "offline"
    model: str = ""

    def __post_init__(self) -> None:
        from hvbench_assets.core.published_weights import provenance

        adult = "mean of gender MLP and yin pitch" if self.blend else "gender MLP"
        self.model = self.model or f"{adult} ({provenance('voice_gender')}); child from yin pitch"

    @property
    def method(self) -> str:
        return "blend" if self.blend else "mlp+pitch"

    def combined(self, audio: np.ndarray, f0: np.ndarray) -> tuple[dict, float, float]:
        """(class probabilities, baseline pitch, MLP male probability) of a stretch of speech."""
        from hvbench_assets.core.audio.voice_gender import male_probability_of

        pitch_probs, baseline = self.pitch.probabilities(f0)
        mlp_male = male_probability_of(audio)
        child = pitch_probs["child"]
        male = mlp_male
        if self.blend:
            adult = pitch_probs["male"] + pitch_probs["female"]
            male = (mlp_male + (pitch_probs["male"] / adult if adult > 0 else 0.5)) / 2
        return {"male": (1 - child) * male, "female": (1 - child) * (1 - male), "child": child}, baseline, mlp_male

    def estimate(self, audio: np.ndarray) -> VoiceDemographics:
        f0, times = self.pitch.voiced_pitch(audio)
        if len(f0) < self.pitch.min_voiced_frames:
            return VoiceDemographics("unavailable", None, None, method=self.method,
                                     reason=f"only {len(f0)} voiced frames; pitch cannot be estimated")
        speech = speech_part(audio, self.min_speech_s)
        segments = []
        for a, b in self.pitch.stretches(times):
            start, end = float(times[a]), float(times[b - 1]) + 0.02
            probs, pitch, male = self.combined(audio[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)], f0[a:b])
            d = decide(probs)
            segments.append({"start_s": round(start, 2), "end_s": round(end, 2), "voice_class": d.voice_class,
                             "confidence": d.confidence, "pitch_hz": pitch, "mlp_male": round(male, 3)})
        probs, baseline, _ = self.combined(speech, f0)
        return _decided(decide(probs), method=self.method, pitch_hz=baseline, segments=segments)


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
class Wav2Vec2Demographer(HubModelPair):
    """Full (the paper's choice): wav2vec2 fine-tuned for age (0-1 ~ 0-100 years) and
    female / male / child, on the speech part of the clip."""

    model_id: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    device: str = "auto"  # auto | cpu | cuda | cuda:N (core/devices.py); resolved here, recorded in `model`
    hub_offline: bool = False  # HF_HUB_OFFLINE: fail at once when the weights are not cached
    max_seconds: float = 30.0
    backend: str = "full"
    model: str = ""
    _loaded: tuple | None = None

    def hub_classes(self) -> tuple:
        from transformers import Wav2Vec2FeatureExtractor

        return Wav2Vec2FeatureExtractor, _age_gender_model_class()

    def estimate(self, audio: np.ndarray) -> VoiceDemographics:
        import torch

        extractor, net = self.load()
        speech = speech_part(audio)[: int(self.max_seconds * SAMPLE_RATE)]
        inputs = extractor(speech, sampling_rate=SAMPLE_RATE, return_tensors="pt")
        with torch.no_grad():
            _, age, probs = net(inputs["input_values"].to(self.device))
        return demographics_from_outputs(float(age[0, 0]), probs[0].cpu().numpy())


def demographics_from_outputs(age_unit: float, probs_fmc: np.ndarray) -> VoiceDemographics:
    """Map the model's outputs (age in 0..1, probabilities female/male/child) to a row."""
    female, male, child = (float(p) for p in probs_fmc)
    return _decided(decide({"male": male, "female": female, "child": child}),
                    age_years=round(age_unit * 100, 1), method="model")
