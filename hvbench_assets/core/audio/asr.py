"""L8 transcript backends: SenseVoice (full) and pocketsphinx's bundled en-us model (offline)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hvbench_assets.core.audio.sensevoice import SenseVoice
from hvbench_assets.core.media import SAMPLE_RATE


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str | None  # "unknown" when the backend's evidence does not support a language
    words: list[dict] = field(default_factory=list)  # {"word", "start_s", "end_s", "conf"}
    segments: list[dict] = field(default_factory=list)  # {"start_s", "end_s", "text"}
    status: str = "ok"  # ok | low_confidence (text kept, language not claimed)
    reason: str | None = None
    evidence: dict = field(default_factory=dict)  # what the language claim rests on


class Transcriber(Protocol):
    backend: str
    model: str

    def transcribe(self, audio: np.ndarray, speech_segments: list[tuple[float, float]]) -> Transcript: ...


_FILLER = re.compile(r"^(<s>|</s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+)$")
_ALT = re.compile(r"\(\d+\)$")  # alternate pronunciations: "the(2)"
PS_FRAME_S = 0.01  # pocketsphinx frames are 10 ms


def word_confidence(words: list[dict]) -> float:
    """Duration-weighted mean of the recogniser's word posteriors."""
    dur = np.array([max(0.01, w["end_s"] - w["start_s"]) for w in words])
    conf = np.array([w.get("conf") or 0.0 for w in words])
    return round(float((dur * conf).sum() / dur.sum()), 3) if len(words) else 0.0


@dataclass
class PocketsphinxTranscriber:
    """Offline English ASR with the acoustic and language model inside the pocketsphinx wheel.
    Each VAD speech segment (padded) is decoded alone, so noise between phrases adds no words.

    It knows only English, so it turns any language into English-looking words. It claims `en` only
    when its own word posteriors say so: duration-weighted mean >= min_confidence over >= min_words
    words (fewer words are too little evidence: a 6-word Spanish sentence scored 0.72). Measured
    (benchmarks/transcript_language.py): real English clips 0.63-0.69 over 11-15 words; espeak-ng
    Mandarin and Spanish 0.19-0.46; espeak-ng English 0.07-0.39, because pocketsphinx mis-hears the
    synthetic voice, so those rows are honestly low_confidence too. Otherwise the row keeps the text
    with language `unknown` and status `low_confidence`."""

    pad_s: float = 0.2
    # search limits per 10 ms frame: pocketsphinx's defaults (30000 HMMs, 20 word exits) decode at ~3x real
    # time on this CPU; these bounds decode about 4x faster with the same language decisions
    # (benchmarks/transcript_language.py; docs/performance.md, "L8 transcript")
    max_hmms: int = 3000
    max_words: int = 5
    min_confidence: float = 0.55
    min_words: int = 8
    backend: str = "offline"
    model: str = "pocketsphinx en-us (bundled)"

    def _decoder(self):
        if not hasattr(self, "_dec"):
            from pocketsphinx import Decoder

            self._dec = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL", maxhmmpf=self.max_hmms, maxwpf=self.max_words)
        return self._dec

    def transcribe(self, audio: np.ndarray, speech_segments: list[tuple[float, float]]) -> Transcript:
        dec = self._decoder()
        # the decoder is reused; its feature state (cepstral mean) carries over from the last clip and changed word
        # confidences (0.055 vs 0.121 on the same audio): start every clip from the fresh decoder's state
        dec.reinit_feat()
        duration = len(audio) / SAMPLE_RATE
        words, segments = [], []
        for start, end in speech_segments:  # no VAD speech: nothing to decode (it invents words in noise)
            a, b = max(0.0, start - self.pad_s), min(duration, end + self.pad_s)
            pcm = (np.clip(audio[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)], -1, 1) * 32767).astype("<i2")
            dec.start_utt()
            dec.process_raw(pcm.tobytes(), full_utt=True)
            dec.end_utt()
            seg_words = [
                {"word": _ALT.sub("", s.word), "start_s": round(a + s.start_frame * PS_FRAME_S, 2),
                 "end_s": round(a + (s.end_frame + 1) * PS_FRAME_S, 2), "conf": round(float(s.prob), 3)}
                for s in dec.seg() if not _FILLER.match(s.word)
            ]
            if seg_words:
                words += seg_words
                segments.append({"start_s": seg_words[0]["start_s"], "end_s": seg_words[-1]["end_s"],
                                 "text": " ".join(w["word"] for w in seg_words)})
        text = " ".join(s["text"] for s in segments)
        if not words:
            return Transcript(text, None, words, segments)
        conf = word_confidence(words)
        evidence = {"method": "pocketsphinx word posteriors", "confidence": conf, "words": len(words),
                    "min_confidence": self.min_confidence, "min_words": self.min_words}
        if conf >= self.min_confidence and len(words) >= self.min_words:
            return Transcript(text, "en", words, segments, evidence=evidence)
        why = (f"English-only recogniser unsure: mean word confidence {conf:.2f} < {self.min_confidence}"
               if conf < self.min_confidence else f"only {len(words)} words (< {self.min_words})")
        return Transcript(text, "unknown", words, segments, "low_confidence",
                          f"{why}; the speech may not be English, the text is kept but not trusted", evidence)


@dataclass
class SenseVoiceTranscriber:
    """Full: SenseVoiceSmall on the whole clip (it segments internally); language from its tag."""

    engine: SenseVoice
    backend: str = "full"

    @property
    def model(self) -> str:
        return self.engine.name

    def transcribe(self, audio: np.ndarray, speech_segments: list[tuple[float, float]]) -> Transcript:
        result = self.engine.recognise(audio)
        segments = [{"text": s.text, "language": s.language, "emotion": s.emotion, "event": s.event}
                    for s in result.segments if s.text]
        words = [w for w in (_timed_token(t) for t in result.timestamps) if w]
        evidence = {"method": "SenseVoice language tag"} if result.language else {}
        return Transcript(result.text, result.language, words, segments, evidence=evidence)


def _timed_token(entry) -> dict | None:
    """funasr timestamps come as [start_ms, end_ms] or [token, start_ms, end_ms] depending on version."""
    if isinstance(entry, (list, tuple)) and len(entry) in (2, 3):
        *token, a, b = entry
        word = {"start_s": round(float(a) / 1000, 3), "end_s": round(float(b) / 1000, 3)}
        return {"word": str(token[0]), **word} if token else word
    return None
