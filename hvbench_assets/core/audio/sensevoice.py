"""SenseVoiceSmall (funasr): one call yields language, emotion, audio event and text (L8 + L9).

funasr is imported lazily and is not part of the default install. Offline, funasr retries for
~20 s and then reports the model as "not registered", which hides the real cause; `SenseVoice.load`
checks the installation and the weights first and names what is missing."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hvbench_assets.core.audio.weights import (
    ModelUnavailable,
    hf_cache_dir,
    hf_local_snapshot,
    host_reachable,
)
from hvbench_assets.core.devices import provenance_text, resolve_device
from hvbench_assets.core.media import SAMPLE_RATE

LANGUAGES = {"zh", "en", "yue", "ja", "ko", "nospeech"}
EMOTIONS = {"HAPPY", "SAD", "ANGRY", "NEUTRAL", "FEARFUL", "DISGUSTED", "SURPRISED", "EMO_UNKNOWN"}
_TAG = re.compile(r"<\|([^|]*)\|>")
_TAG_RUN = re.compile(r"((?:<\|[^|]*\|>)+)")


@dataclass(frozen=True)
class SenseVoiceSegment:
    language: str | None
    emotion: str | None  # lower case: happy, sad, ..., unknown
    event: str | None  # Speech, BGM, Laughter, Applause, Cry, Cough, ...
    text: str


@dataclass(frozen=True)
class SenseVoiceResult:
    segments: list[SenseVoiceSegment]
    timestamps: list = field(default_factory=list)  # [[start_ms, end_ms], ...] per token when returned

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments if s.text).strip()

    def _weighted_mode(self, attr: str, skip: set[str]) -> str | None:
        votes: Counter = Counter()
        for s in self.segments:
            value = getattr(s, attr)
            if value and value not in skip:
                votes[value] += max(1, len(s.text))
        return votes.most_common(1)[0][0] if votes else None

    @property
    def language(self) -> str | None:
        return self._weighted_mode("language", {"nospeech"})

    @property
    def emotion(self) -> str | None:
        return self._weighted_mode("emotion", {"unknown"})

    @property
    def emotion_share(self) -> float | None:
        """Share of the text (by characters) spoken with the clip-level emotion."""
        emo = self.emotion
        if emo is None:
            return None
        total = sum(max(1, len(s.text)) for s in self.segments if s.emotion and s.emotion != "unknown")
        return round(sum(max(1, len(s.text)) for s in self.segments if s.emotion == emo) / total, 3)


def parse_sensevoice(raw: str) -> SenseVoiceResult:
    """Split SenseVoice's rich transcription (`<|en|><|NEUTRAL|><|Speech|><|woitn|>text<|en|>...`)
    into segments: every run of tags opens a segment whose text runs up to the next tag run."""
    parts = _TAG_RUN.split(raw)
    segments = [_segment([], parts[0])] if parts[0].strip() else []
    for tag_run, text in zip(parts[1::2], parts[2::2]):
        segments.append(_segment(_TAG.findall(tag_run), text))
    return SenseVoiceResult(segments)


def _segment(tags: list[str], text: str) -> SenseVoiceSegment:
    language = next((t for t in tags if t in LANGUAGES), None)
    emo = next((t for t in tags if t in EMOTIONS), None)
    emotion = None if emo is None else ("unknown" if emo == "EMO_UNKNOWN" else emo.lower())
    known = LANGUAGES | EMOTIONS | {"withitn", "woitn"}
    event = next((t for t in tags if t not in known), None)
    return SenseVoiceSegment(language, emotion, event, " ".join(text.split()))


def modelscope_cache_dir(cache: str = "") -> Path:
    """ModelScope's cache: `cache` (MODELSCOPE_CACHE, read by the caller), else its default."""
    return Path(cache) if cache else Path.home() / ".cache" / "modelscope" / "hub"


@dataclass
class SenseVoice:
    """funasr SenseVoiceSmall, loaded once per process; results memoised per audio content."""

    model_id: str = "iic/SenseVoiceSmall"  # ModelScope id; "FunAudioLLM/SenseVoiceSmall" with hub="hf"
    hub: str = "ms"  # ms (ModelScope) | hf
    model_dir: str = ""  # a local folder with model.pt etc. (pre-seeded); wins over the hub
    device: str = "auto"  # auto | cpu | cuda | cuda:N (core/devices.py); resolved here, recorded in `name`
    hub_endpoint: str = ""  # reachability probe; default: the hub's public address
    modelscope_cache: str = ""  # MODELSCOPE_CACHE; empty: ModelScope's default
    _model: object | None = None
    _memo: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.device = resolve_device(self.device, "the audio device (HVBENCH_AUDIO_DEVICE)")

    @property
    def name(self) -> str:
        return provenance_text(self.model_dir or self.model_id, self.device)

    def local_weights(self) -> Path | None:
        if self.model_dir:
            return Path(self.model_dir) if (Path(self.model_dir) / "model.pt").exists() else None
        if self.hub == "hf":
            return hf_local_snapshot(self.model_id, "model.pt")
        root = modelscope_cache_dir(self.modelscope_cache)
        for folder in (root / "models" / self.model_id, root / self.model_id):
            if (folder / "model.pt").exists():
                return folder
        return None

    def check(self) -> Path | None:
        """Local weight folder (None: the hub answers and funasr will download). Raises
        ModelUnavailable naming every missing piece."""
        problems = []
        try:
            import funasr  # noqa: F401
        except ImportError:
            problems.append("the funasr package is not installed (install the `full` extra: pip install 'hvbench[full]')")
        local = self.local_weights()
        if local is None:
            cache = hf_cache_dir() if self.hub == "hf" else modelscope_cache_dir(self.modelscope_cache)
            endpoint = self.hub_endpoint or ("https://huggingface.co" if self.hub == "hf" else "https://www.modelscope.cn")
            if self.model_dir:
                problems.append(f"model_dir {self.model_dir} holds no model.pt")
            elif not host_reachable(endpoint):
                problems.append(
                    f"weights of {self.model_id!r} are not in the local cache ({cache}) and {endpoint} is unreachable; "
                    f"pre-seed them with `modelscope download --model {self.model_id}` (or `huggingface-cli download "
                    f"FunAudioLLM/SenseVoiceSmall` with hub=hf) into that cache, or set model_dir to a folder with model.pt"
                )
        if problems:
            raise ModelUnavailable(f"SenseVoice ({self.name}) cannot run: " + "; ".join(problems))
        return local

    def load(self):
        if self._model is None:
            local = self.check()
            from funasr import AutoModel

            self._model = AutoModel(model=str(local) if local else self.model_id, hub=self.hub,
                                    device=self.device, disable_update=True)
        return self._model

    def recognise(self, audio: np.ndarray) -> SenseVoiceResult:
        key = hashlib.sha1(np.ascontiguousarray(audio).tobytes()).hexdigest()
        if key not in self._memo:
            model = self.load()
            out = model.generate(input=audio.astype(np.float32), fs=SAMPLE_RATE, language="auto",
                                 use_itn=True, output_timestamp=True)
            raw = "".join(o.get("text", "") for o in out)
            stamps = [t for o in out for t in (o.get("timestamp") or [])]
            parsed = parse_sensevoice(raw)
            self._memo[key] = SenseVoiceResult(parsed.segments, stamps)
        return self._memo[key]
