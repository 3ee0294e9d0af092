"""Which implementation runs for each audio / speaker label, from one config (full vs offline).
Backends are built once per process and configuration: models load once, results are shared. The config
also carries the L7 settings; core/speakers/methods.py builds that scorer from it (speakers sit above audio)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MUSIC_DETECTORS = ("yamnet", "signal")  # offline L6 music: YAMNet's AudioSet scores | signal processing
# offline L10 adult gender: pitch alone | the Keras gender MLP | the mean of both (child always from pitch)
VOICE_GENDER = ("pitch", "mlp", "blend")


@dataclass(frozen=True)
class AudioBackendConfig:
    full: bool = False
    device: str = "auto"  # auto | cpu | cuda | cuda:N, resolved by core/devices.py in each full backend
    ast_model: str = "MIT/ast-finetuned-audioset-10-10-0.4593"
    sensevoice_model: str = "iic/SenseVoiceSmall"
    sensevoice_hub: str = "ms"
    sensevoice_dir: str = ""
    age_gender_model: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    light_asd_weights: str = ""  # empty: the shipped checkpoint
    light_asd_windows_s: tuple[float, ...] = (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6)  # the reference's multi-window average
    music_detector: str = "yamnet"  # offline tagger's music overlay, one of MUSIC_DETECTORS
    voice_gender: str = "pitch"  # offline voice: one of VOICE_GENDER
    speaker_method: str = "verified"  # verified | combined | light_asd | lipsync (core/speakers/methods.py)
    asd_device: str = "auto"  # Light-ASD: auto = CUDA when present, else CPU
    hub_offline: bool = False  # HF_HUB_OFFLINE: full hub models fail at once when not cached
    modelscope_cache: str = ""  # MODELSCOPE_CACHE (SenseVoice); empty: ModelScope's default

    def __post_init__(self) -> None:
        if self.music_detector not in MUSIC_DETECTORS:
            raise ValueError(f"music_detector must be one of {MUSIC_DETECTORS}, got {self.music_detector!r}")
        if self.voice_gender not in VOICE_GENDER:
            raise ValueError(f"voice_gender must be one of {VOICE_GENDER}, got {self.voice_gender!r}")


@lru_cache(maxsize=4)
def _sensevoice(cfg: AudioBackendConfig):
    from hvbench_assets.core.audio.sensevoice import SenseVoice

    return SenseVoice(cfg.sensevoice_model, cfg.sensevoice_hub, cfg.sensevoice_dir, cfg.device,
                      modelscope_cache=cfg.modelscope_cache)


@lru_cache(maxsize=16)
def build(kind: str, cfg: AudioBackendConfig):
    """kind: tagger | transcriber | emotion | voice (the L7 scorer: core/speakers/methods.py build_scorer)."""
    from hvbench_assets.core.audio import asr, emotion, tags, voice

    if kind == "tagger":
        if cfg.full:
            return tags.AstTagger(cfg.ast_model, device=cfg.device, hub_offline=cfg.hub_offline)
        if cfg.music_detector == "yamnet":
            from hvbench_assets.core.audio.yamnet import YamnetMusicDetector

            return tags.VadEnergyTagger(music_detector=YamnetMusicDetector())
        return tags.VadEnergyTagger()
    if kind == "transcriber":
        return asr.SenseVoiceTranscriber(_sensevoice(cfg)) if cfg.full else asr.PocketsphinxTranscriber()
    if kind == "emotion":
        return emotion.SenseVoiceEmotion(_sensevoice(cfg)) if cfg.full else emotion.NoOfflineEmotion()
    if kind == "voice":
        if cfg.full:
            return voice.Wav2Vec2Demographer(cfg.age_gender_model, cfg.device, hub_offline=cfg.hub_offline)
        if cfg.voice_gender == "pitch":
            return voice.PitchDemographer()
        return voice.MlpGenderDemographer(blend=cfg.voice_gender == "blend")
    raise ValueError(f"unknown backend kind {kind!r}")
