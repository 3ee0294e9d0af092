"""Item by item: music alongside speech (L6), the speech gate of the tasks, and the honest
language of the offline transcript (L8), on generated sounds, espeak-ng speech and real clips."""

import numpy as np
import pytest

from hvbench_assets.core.audio import labels
from hvbench_assets.core.audio.asr import PocketsphinxTranscriber
from hvbench_assets.core.audio.music import MusicDetector
from hvbench_assets.core.audio.tags import MUSIC, OTHER, SPEECH, VadEnergyTagger
from hvbench_assets.core.audio.task_predicates import is_trusted_english, speech_for_tasks
from hvbench_assets.core.media import load_audio
from hvbench_assets.testkit import sounds
from hvbench_assets_tests.speech import synthesize_speech

EN = "The weather is lovely today and we will walk to the park after lunch with our friends."
CMN = "今天天气很好，我们下午一起去公园散步，然后去吃晚饭。我们的老师说明天要考试。"
ES = "El tiempo es muy agradable hoy y vamos a caminar al parque después del almuerzo con nuestros amigos."


def tags(audio):
    return labels.tags_row(VadEnergyTagger(), audio)


@pytest.mark.parametrize("name", ["chords", "piano_with_beat", "sung_vowels"])
def test_chords_notes_and_singing_are_music(name):
    row = tags(getattr(sounds, name)())
    assert row["is_music"] and row["music_s"] > 6 and row["sound_type"] == MUSIC and not row["is_speech"]
    assert {"label": MUSIC, "score": row["music_score"]} in row["tags"] and row["music_score"] > 0.7
    assert row["music_evidence"]["tonal_share"] > 0.5


def test_a_beat_alone_is_music_by_its_beat():
    result = MusicDetector().detect(sounds.beat(8.0))
    assert result.tonal_share == 0 and result.beat_strength > 0.6 and result.music_s > 6


@pytest.mark.parametrize("audio", [sounds.tone(), sounds.white_noise(), np.zeros(48000, np.float32)],
                         ids=["steady tone", "noise", "silence"])
def test_a_steady_tone_noise_and_silence_are_not_music(audio):
    row = tags(audio)
    assert not row["is_music"] and row["music_s"] == 0 and row["sound_type"] != MUSIC


@pytest.mark.parametrize("voice,text", [("en-us", EN), ("cmn", CMN), ("es", ES)])
def test_synthesized_speech_is_speech_without_music(tmp_path, voice, text):
    row = tags(load_audio(synthesize_speech(text, tmp_path / "s.wav", voice=voice)))
    assert row["is_speech"] and not row["is_music"] and row["speech_music_s"] <= 0.1 * row["speech_s"]
    assert speech_for_tasks(row)[0]


@pytest.mark.parametrize("music", ["chords", "piano_with_beat"])
def test_speech_over_music_is_both_and_not_speech_for_the_tasks(tmp_path, music):
    speech = load_audio(synthesize_speech(EN, tmp_path / "s.wav"))
    row = tags(sounds.mix(speech, getattr(sounds, music)(), music_db=-6))
    assert row["is_speech"] and row["sound_type"] == SPEECH and row["is_music"]
    # music plays under all of the speech; the detector finds it under 49-67 % (loud speech masks it)
    assert row["speech_music_s"] >= 0.4 * row["speech_s"]
    ok, why = speech_for_tasks(row)
    assert not ok and "music" in why


def test_real_speech_clips_are_speech_for_the_tasks(man_talking_head, two_people_talking, two_children):
    for clip in (man_talking_head, two_people_talking, two_children):
        row = tags(load_audio(clip))
        assert row["is_speech"] and not row["is_music"], clip.name
        assert speech_for_tasks(row) == (True, f"speech ({row['speech_s']:.1f} s)")


def test_speech_gate_reasons():
    assert speech_for_tasks(None) == (False, "no audio_tags row")
    assert not speech_for_tasks({"status": "ok", "is_speech": False, "sound_type": OTHER})[0]
    old = {"status": "ok", "is_speech": True, "speech_s": 3.0}  # written before music detection existed
    assert speech_for_tasks(old) == (False, "audio_tags predates music detection: rematerialize audio_tags")


def transcript(audio):
    return labels.transcript_row(PocketsphinxTranscriber(), audio, VadEnergyTagger().tag(audio).speech_segments)


@pytest.mark.parametrize("voice,text", [("cmn", CMN), ("es", ES)])
def test_non_english_speech_is_not_claimed_english(tmp_path, voice, text):
    row = transcript(load_audio(synthesize_speech(text, tmp_path / "s.wav", voice=voice)))
    assert row["status"] == "low_confidence" and row["language"] == "unknown"
    assert row["text"] and row["n_chars"] == len(row["text"])  # the text is kept
    assert "confidence" in row["reason"] or "words" in row["reason"]
    assert row["language_evidence"]["confidence"] < 0.55 or row["language_evidence"]["words"] < 8
    assert not is_trusted_english(row)


def test_synthetic_english_is_not_trusted_when_the_recogniser_mishears_it(tmp_path):
    # pocketsphinx mis-hears espeak-ng's voice (the measured confidence is 0.07-0.39), so even English
    # synthetic speech is not claimed: a wrong "en" with nonsense text is what this rule prevents
    row = transcript(load_audio(synthesize_speech(EN, tmp_path / "s.wav")))
    assert (row["language"], row["status"]) in {("en", "ok"), ("unknown", "low_confidence")}
    assert is_trusted_english(row) == (row["language_evidence"]["confidence"] >= 0.55)


def test_real_english_speech_is_english(man_talking_head, two_people_talking):
    for clip in (man_talking_head, two_people_talking):
        row = transcript(load_audio(clip))
        assert row["status"] == "ok" and row["language"] == "en" and is_trusted_english(row), row
        assert row["language_evidence"]["confidence"] >= 0.55 and row["language_evidence"]["words"] >= 8


def test_trusted_english_needs_status_ok_and_en():
    assert is_trusted_english({"status": "ok", "language": "en", "text": "x" * 40})
    assert not is_trusted_english({"status": "low_confidence", "language": "unknown", "text": "x" * 40})
    assert not is_trusted_english({"status": "ok", "language": "zh"})
    assert not is_trusted_english(None)


def test_a_reused_recogniser_gives_each_clip_the_transcript_of_a_fresh_one(tmp_path):
    # runs reuse one recogniser per process; what it heard before must not change the next clip's words or
    # confidences (its feature state carried over and moved a word's confidence from 0.055 to 0.121)
    english = load_audio(synthesize_speech(EN, tmp_path / "en.wav"))
    spanish = load_audio(synthesize_speech(ES, tmp_path / "es.wav", voice="es"))
    fresh = transcript(english)
    reused = PocketsphinxTranscriber()
    for audio in (spanish, english):
        row = labels.transcript_row(reused, audio, VadEnergyTagger().tag(audio).speech_segments)
    assert row == fresh
