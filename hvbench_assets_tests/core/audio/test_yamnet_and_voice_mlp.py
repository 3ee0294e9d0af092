"""L6 with YAMNet (the default offline music detector) and L10's gender MLP, on generated music and
sounds, espeak-ng speech and the shared clips; their numpy features against reference values."""

import numpy as np
import pytest

from hvbench_assets.core.audio import labels, voice, voice_gender, yamnet
from hvbench_assets.core.audio.backends import AudioBackendConfig, build
from hvbench_assets.core.audio.tags import MUSIC, SINGING, SPEECH, VadEnergyTagger
from hvbench_assets.core.audio.task_predicates import speech_for_tasks
from hvbench_assets.core.audio.yamnet import YamnetMusicDetector
from hvbench_assets.core.media import load_audio
from hvbench_assets.testkit import sounds
from hvbench_assets_tests.speech import synthesize_speech

EN = "The weather is lovely today and we will walk to the park after lunch with our friends."


def tags(audio):
    return labels.tags_row(VadEnergyTagger(music_detector=YamnetMusicDetector()), audio)


def test_log_mel_follows_the_yamnet_recipe():
    # a 1 kHz tone lands in the mel band whose centre is nearest 1 kHz; DC and > 7.5 kHz carry no weight
    mel = yamnet.log_mel(sounds.tone(1.0, hz=1000.0))
    hz_to_mel = lambda f: 1127.0 * np.log1p(f / 700.0)  # noqa: E731
    centres = np.linspace(hz_to_mel(125.0), hz_to_mel(7500.0), 66)[1:-1]
    assert mel.shape == (1 + (16000 - 400) // 160, 64)
    assert int(np.argmax(mel.mean(0))) == int(np.argmin(np.abs(centres - hz_to_mel(1000.0))))
    w = yamnet.mel_matrix()
    assert w.shape == (257, 64) and w[0].sum() == 0 and w[-1].sum() == 0
    # silence is log(0.001) everywhere; patches hop 0.48 s and pad to whole patches
    assert np.allclose(yamnet.log_mel(np.zeros(16000, np.float32)), np.log(0.001))
    assert yamnet.patches(np.zeros(15600, np.float32)).shape == (1, 96, 64)
    assert yamnet.patches(np.zeros(15601, np.float32)).shape == (2, 96, 64)


def test_class_map_is_the_models_output_order():
    names = yamnet.class_names()
    assert len(names) == 521 and names[0] == "Speech" and names[132] == "Music" and names[494] == "Silence"


@pytest.mark.parametrize("name", ["chords", "piano_with_beat"])
def test_instrument_music_is_music_over_the_whole_item(name):
    row = tags(getattr(sounds, name)())
    assert row["is_music"] and row["music_s"] >= 7.5 and row["sound_type"] == MUSIC and not row["is_speech"]
    ev = row["music_evidence"]
    assert ev["method"] == "yamnet" and ev["top_classes"][0]["label"] == "Music" and ev["music_max"] > 0.9
    assert {t["label"] for t in row["tags"]} >= {MUSIC, SINGING, SPEECH}


@pytest.mark.parametrize("audio", [sounds.tone(), sounds.white_noise(), sounds.beeps(), sounds.ticking(),
                                   np.zeros(48000, np.float32)],
                         ids=["steady tone", "noise", "beeps", "ticking clock", "silence"])
def test_tones_noise_beeps_ticks_and_silence_are_not_music(audio):
    # the signal detector calls beeps and a ticking clock music (a steady beat); YAMNet does not
    row = tags(audio)
    assert not row["is_music"] and row["music_s"] == 0 and row["sound_type"] != MUSIC


def test_speech_alone_and_speech_over_music(tmp_path):
    speech = load_audio(synthesize_speech(EN, tmp_path / "s.wav"))
    alone = tags(speech)
    assert alone["is_speech"] and not alone["is_music"] and speech_for_tasks(alone)[0]
    mixed = tags(sounds.mix(speech, sounds.piano_with_beat(), music_db=-6))
    assert mixed["is_speech"] and mixed["is_music"] and mixed["speech_music_s"] >= 0.9 * mixed["speech_s"]
    ok, why = speech_for_tasks(mixed)
    assert not ok and "music" in why


def test_music_intro_then_speech_is_timed(tmp_path):
    speech = load_audio(synthesize_speech(EN, tmp_path / "s.wav"))
    row = tags(np.concatenate([sounds.piano_with_beat(4.0), speech]))
    (start, end), = row["music_segments"]
    assert start == 0 and 3.5 <= end <= 5.0 and row["speech_music_s"] < 0.2 * row["speech_s"]
    assert speech_for_tasks(row)[0]  # the music is not under the speech


def test_real_speech_clips_have_no_music(man_talking_head, two_people_talking, two_children):
    for clip in (man_talking_head, two_people_talking, two_children):
        row = tags(load_audio(clip))
        assert row["is_speech"] and not row["is_music"], clip.name
        assert speech_for_tasks(row)[0]


def test_short_audio_gives_a_silence_row():
    row = tags(np.zeros(100, np.float32))
    assert row["status"] == "ok" and not row["is_speech"] and not row["is_music"] and row["sound_type"] == "silence"


def test_backends_are_chosen_by_config():
    assert isinstance(build("tagger", AudioBackendConfig()).music_detector, YamnetMusicDetector)
    assert "YAMNet" in build("tagger", AudioBackendConfig()).model
    assert not isinstance(build("tagger", AudioBackendConfig(music_detector="signal")).music_detector,
                          YamnetMusicDetector)
    assert isinstance(build("voice", AudioBackendConfig()), voice.PitchDemographer)
    assert isinstance(build("voice", AudioBackendConfig(voice_gender="mlp")), voice.MlpGenderDemographer)
    assert build("voice", AudioBackendConfig(voice_gender="blend")).blend
    with pytest.raises(ValueError, match="music_detector"):
        AudioBackendConfig(music_detector="ast")


# -- L10: the gender MLP ---------------------------------------------------------------------------
def _librosa_probe() -> np.ndarray:
    sr = 22050
    t = np.arange(sr) / sr
    return (0.3 * np.sin(2 * np.pi * 220 * t) + 0.1 * np.sin(2 * np.pi * 1500 * t)
            + 0.05 * np.random.default_rng(0).standard_normal(sr)).astype(np.float32)


def test_mel_mean_matches_librosa():
    # librosa 0.9.2: np.mean(librosa.feature.melspectrogram(y=x, sr=22050).T, axis=0) of the probe
    expected = {0: 0.30108001828193665, 5: 0.7248637676239014, 10: 0.465760201215744, 20: 0.1302919238805771,
                40: 0.14471131563186646, 80: 0.18105264008045197, 127: 0.19230221211910248}
    mel = voice_gender.mel_mean(_librosa_probe())
    assert mel.shape == (128,)
    for band, value in expected.items():
        assert mel[band] == pytest.approx(value, rel=1e-4)


def test_mlp_layers_and_output_range():
    layers = voice_gender.mlp_layers()
    assert [k.shape for k, _ in layers] == [(128, 256), (256, 256), (256, 128), (128, 128), (128, 64), (64, 1)]
    assert 0.0 <= voice_gender.male_probability(voice_gender.mel_mean(_librosa_probe())) <= 1.0


@pytest.mark.parametrize("variant,truth", [("m3", "male"), ("m5", "male"), ("f2", "female"), ("f3", "female")])
def test_mlp_tells_espeak_voices_apart(tmp_path, variant, truth):
    audio = load_audio(synthesize_speech(EN, tmp_path / "s.wav", voice=f"en+{variant}"))
    row = voice.MlpGenderDemographer().estimate(audio)
    assert row.status == "ok" and row.voice_class == truth and row.method == "mlp+pitch"
    assert voice.rule_violations(labels.voice_row(voice.MlpGenderDemographer(), audio)) == []
    assert row.segments and all("mlp_male" in s for s in row.segments)


def test_mlp_on_the_shared_man(man_talking_head):
    row = voice.MlpGenderDemographer().estimate(load_audio(man_talking_head))
    assert row.voice_class == "male" and row.gender_probs["male"] > 0.5


def test_blend_averages_the_mlp_and_pitch_male_probabilities(tmp_path):
    # a low espeak-ng Mandarin female voice: pitch alone says male, the MLP female, their mean female
    audio = load_audio(synthesize_speech("我的朋友明天要去北京工作，他很高兴。", tmp_path / "s.wav", voice="cmn+f4"))
    pitch = voice.PitchDemographer().estimate(audio)
    mlp = voice.MlpGenderDemographer().estimate(audio)
    blend = voice.MlpGenderDemographer(blend=True).estimate(audio)
    assert blend.method == "blend" and voice.rule_violations(labels.voice_row(voice.MlpGenderDemographer(blend=True),
                                                                                audio)) == []
    expected = (pitch.gender_probs["male"] + mlp.gender_probs["male"]) / 2
    assert blend.gender_probs["male"] == pytest.approx(expected, abs=2e-3)


@pytest.mark.parametrize("audio", [np.zeros(32000, np.float32), sounds.white_noise()], ids=["silence", "noise"])
def test_no_voice_gives_an_unavailable_row(audio):
    row = voice.MlpGenderDemographer().estimate(audio)
    assert row.status == "unavailable" and row.voice_class is None and "voiced frames" in row.reason
