"""The `audio_models` resource: model ids, weight locations and speaker-rule knobs for L6-L10 and L7.
Which implementation runs (offline | full) comes from `settings.backend_profile`."""


import dagster as dg

from hvbench_assets.core.audio.backends import AudioBackendConfig, build
from hvbench_assets.core.speakers.rules import DEFAULT_MIN_RUN
from hvbench_assets.defs.resources import env_or


class AudioModelsResource(dg.ConfigurableResource):
    """Audio and active-speaker backends. Full models load once per process."""

    device: str = "auto"  # full models: auto (a CUDA GPU when torch sees one, else cpu) | cpu | cuda | cuda:N
    ast_model: str = "MIT/ast-finetuned-audioset-10-10-0.4593"
    sensevoice_model: str = "iic/SenseVoiceSmall"
    sensevoice_hub: str = "ms"  # ms (ModelScope) | hf
    sensevoice_dir: str = ""  # local folder with a pre-seeded SenseVoiceSmall (model.pt ...)
    age_gender_model: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    light_asd_weights: str = ""  # a Light-ASD checkpoint for the full profile; empty = the shipped weights
    light_asd_windows_s: list[float] = [1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6]  # scores averaged over these window lengths
    speaker_method: str = "combined"  # L7: combined | light_asd | lipsync (core/speakers/methods.py)
    asd_device: str = "auto"  # Light-ASD device: auto = CUDA when present (torch / onnxruntime), else cpu
    speaking_min_run: int = DEFAULT_MIN_RUN  # frames; a track speaks when its longest positive run is longer
    veto_min_confidence: float = 0.7  # both voice and face class must be this sure to veto a speaker
    music_detector: str = "yamnet"  # offline L6 music: yamnet (AudioSet model) | signal (tonal peaks + beat)
    voice_gender: str = "pitch"  # offline L10: pitch | mlp (Keras gender MLP, child from pitch) | blend (mean of both)

    def config(self, full: bool) -> AudioBackendConfig:
        return AudioBackendConfig(
            full=full, device=self.device, ast_model=self.ast_model, sensevoice_model=self.sensevoice_model,
            sensevoice_hub=self.sensevoice_hub, sensevoice_dir=self.sensevoice_dir,
            age_gender_model=self.age_gender_model, light_asd_weights=self.light_asd_weights,
            light_asd_windows_s=tuple(self.light_asd_windows_s), music_detector=self.music_detector,
            voice_gender=self.voice_gender, speaker_method=self.speaker_method, asd_device=self.asd_device,
        )

    def backend(self, kind: str, full: bool):
        """kind: tagger | transcriber | emotion | voice | asd."""
        if kind == "asd":
            from hvbench_assets.core.speakers.methods import build_scorer

            return build_scorer(self.config(full))
        return build(kind, self.config(full))


def build_audio_models() -> AudioModelsResource:
    return AudioModelsResource(
        device=env_or("HVBENCH_AUDIO_DEVICE", "auto"),
        sensevoice_dir=env_or("HVBENCH_SENSEVOICE_DIR", ""),
        light_asd_weights=env_or("HVBENCH_LIGHT_ASD_WEIGHTS", ""),
        music_detector=env_or("HVBENCH_MUSIC_DETECTOR", "yamnet"),
        voice_gender=env_or("HVBENCH_VOICE_GENDER", "pitch"),
        speaker_method=env_or("HVBENCH_SPEAKER_METHOD", "combined"),
        asd_device=env_or("HVBENCH_ASD_DEVICE", "auto"),
    )


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources={"audio_models": build_audio_models()})
