"""Which implementation runs for each audio / speaker label, from one config (full vs offline).
Backends are built once per process and configuration: models load once, results are shared."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class AudioBackendConfig:
    full: bool = False
    device: str = "cpu"
    ast_model: str = "MIT/ast-finetuned-audioset-10-10-0.4593"
    sensevoice_model: str = "iic/SenseVoiceSmall"
    sensevoice_hub: str = "ms"
    sensevoice_dir: str = ""
    age_gender_model: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    light_asd_weights: str = ""  # empty: the shipped checkpoint
    light_asd_windows_s: tuple[float, ...] = (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6)  # the reference's multi-window average
    speaker_method: str = "combined"  # combined | light_asd | lipsync (core/speakers/methods.py)
    asd_device: str = "auto"  # Light-ASD: auto = CUDA when present, else CPU


@lru_cache(maxsize=4)
def _sensevoice(cfg: AudioBackendConfig):
    from hvbench_assets.core.audio.sensevoice import SenseVoice

    return SenseVoice(cfg.sensevoice_model, cfg.sensevoice_hub, cfg.sensevoice_dir, cfg.device)


@lru_cache(maxsize=16)
def build(kind: str, cfg: AudioBackendConfig):
    """kind: tagger | transcriber | emotion | voice | asd."""
    from hvbench_assets.core.audio import asr, emotion, tags, voice

    if kind == "tagger":
        return tags.AstTagger(cfg.ast_model, device=cfg.device) if cfg.full else tags.VadEnergyTagger()
    if kind == "transcriber":
        return asr.SenseVoiceTranscriber(_sensevoice(cfg)) if cfg.full else asr.PocketsphinxTranscriber()
    if kind == "emotion":
        return emotion.SenseVoiceEmotion(_sensevoice(cfg)) if cfg.full else emotion.NoOfflineEmotion()
    if kind == "voice":
        return voice.Wav2Vec2Demographer(cfg.age_gender_model, cfg.device) if cfg.full else voice.PitchDemographer()
    if kind == "asd":
        from hvbench_assets.core.speakers.methods import MethodScorer

        return MethodScorer(cfg.speaker_method, cfg.full, cfg.light_asd_weights, cfg.light_asd_windows_s, cfg.asd_device)
    raise ValueError(f"unknown backend kind {kind!r}")
