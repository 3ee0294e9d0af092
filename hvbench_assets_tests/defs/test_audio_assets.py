from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.core.audio.tables import (
    AUDIO_TAGS,
    SPEECH_EMOTION,
    TRANSCRIPT,
    VOICE_DEMOGRAPHICS,
)
from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import load_audio, probe_video
from hvbench_assets.defs.labels.audio import (
    audio_tags,
    speech_emotion,
    transcript,
    voice_demographics,
)
from hvbench_assets.defs.resources import AudioModelsResource, SettingsResource, WarehouseResource
from hvbench_assets.testkit import sounds
from hvbench_assets.testkit.media_factory import moving_square_video
from hvbench_assets_tests.speech import synthesize_speech

AUDIO_ASSETS = [audio_tags, transcript, speech_emotion, voice_demographics]


def resources(tmp_path, profile="offline"):
    return {"settings": SettingsResource(data_dir=str(tmp_path / "data"), backend_profile=profile),
            "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")),
            "audio_models": AudioModelsResource()}


def run(tmp_path, key, path, assets=AUDIO_ASSETS, profile="offline", raise_on_error=True, extra=None):
    res = {**resources(tmp_path, profile), **(extra or {})}
    wh = res["warehouse"].get()
    wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(path).as_row(), "status": "ok", "reason": None}])
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [key])
    result = dg.materialize(assets, partition_key=key, resources=res, instance=instance, raise_on_error=raise_on_error)
    return result, wh


def test_talking_head_speech_english_transcript(tmp_path, man_talking_head, monkeypatch):
    from hvbench_assets.core.audio import cache

    monkeypatch.setattr(cache, "_MEMO", {})  # decode for real, so the disk cache is written
    result, wh = run(tmp_path, "man", man_talking_head)
    assert result.success
    tags = wh.rows(AUDIO_TAGS, video_id="man")[0]
    assert tags["status"] == "ok" and tags["is_speech"] and tags["sound_type"] == "speech"
    assert tags["backend"] == "offline" and "silero" in tags["model"]
    assert tags["audio_cache"].endswith(".npy") and Path(tags["audio_cache"]).exists()  # the shared decode
    tr = wh.rows(TRANSCRIPT, video_id="man")[0]
    assert tr["status"] == "ok" and tr["language"] == "en" and tr["n_chars"] > 20 and tr["words"]
    assert tr["model"].startswith("pocketsphinx")
    emo = wh.rows(SPEECH_EMOTION, video_id="man")[0]
    assert emo["status"] == "unavailable" and emo["emotion"] is None and emo["reason"]
    voice = wh.rows(VOICE_DEMOGRAPHICS, video_id="man")[0]
    assert voice["status"] == "ok" and voice["voice_class"] == "male" and voice["method"] == "heuristic"
    md = result.asset_materializations_for_node("audio_tags")[0].metadata
    assert md["is_speech"].value is True


def test_tone_only_clip_has_no_speech_and_no_transcript(tmp_path):
    clip = moving_square_video(tmp_path / "tone.mp4", seconds=3.0, tone_hz=440.0)
    _, wh = run(tmp_path, "tone", clip)
    tags = wh.rows(AUDIO_TAGS, video_id="tone")[0]
    assert tags["status"] == "ok" and not tags["is_speech"] and tags["sound_type"] == "other_sound"
    for spec in (TRANSCRIPT, SPEECH_EMOTION, VOICE_DEMOGRAPHICS):
        row = wh.rows(spec, video_id="tone")[0]
        assert row["status"] == "no_speech" and "no speech" in row["reason"] and row["backend"] == "offline"
    assert wh.rows(TRANSCRIPT, video_id="tone")[0]["text"] is None


def test_clip_without_audio_gives_no_audio_rows(tmp_path):
    clip = moving_square_video(tmp_path / "mute.mp4", seconds=2.0, tone_hz=None)
    result, wh = run(tmp_path, "mute", clip)
    assert result.success
    for spec in (AUDIO_TAGS, TRANSCRIPT, SPEECH_EMOTION, VOICE_DEMOGRAPHICS):
        row = wh.rows(spec, video_id="mute")[0]
        assert row["status"] == "no_audio", spec.name


def test_full_profile_fails_fast_with_the_missing_model(tmp_path, monkeypatch, man_talking_head):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result, _ = run(tmp_path, "man", man_talking_head, assets=[audio_tags], profile="full", raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    assert "MIT/ast-finetuned-audioset-10-10-0.4593" in str(failure.step_failure_data.error)


def test_unprobed_clip_is_a_clear_failure(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["ghost"])
    with pytest.raises(dg.Failure, match="no video_probe row"):
        dg.materialize([audio_tags], partition_key="ghost", resources=resources(tmp_path), instance=instance)


def test_audio_is_decoded_once_for_all_audio_labels(tmp_path, man_talking_head, monkeypatch):
    from hvbench_assets.core.audio import cache

    calls = []
    real = cache.load_audio
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "load_audio", lambda *a, **k: calls.append(a) or real(*a, **k))
    result, _ = run(tmp_path, "man", man_talking_head)
    assert result.success and len(calls) == 1


def test_rows_and_asset_versions_name_the_backend_profile(tmp_path, monkeypatch):
    from hvbench_assets.defs.labels.audio import profiled

    clip = moving_square_video(tmp_path / "tone.mp4", seconds=1.0, tone_hz=440.0)
    _, wh = run(tmp_path, "tone", clip, assets=[audio_tags])
    assert wh.rows(AUDIO_TAGS, video_id="tone")[0]["code_version"] == "3-offline"
    assert audio_tags.code_versions_by_key[dg.AssetKey("audio_tags")] == profiled("3")
    monkeypatch.setenv("HVBENCH_BACKEND_PROFILE", "full")
    assert profiled("1") == "1-full"  # a location started in full mode marks offline rows stale
    monkeypatch.delenv("HVBENCH_BACKEND_PROFILE")
    # a model chosen by a setting joins the version only when it is not the default one (the default's stays put)
    assert profiled("10", "HVBENCH_FACE_DETECTOR") == "10-offline"
    monkeypatch.setenv("HVBENCH_FACE_DETECTOR", "yunet_onnx")
    assert profiled("10", "HVBENCH_FACE_DETECTOR", "HVBENCH_PERSON_DETECTOR") == "10-offline-yunet_onnx"


def test_every_stored_voice_row_follows_the_decision_rule(tmp_path, man_talking_head, two_children, two_people_talking):
    from hvbench_assets.core.audio.voice import rule_violations

    female = synthesize_speech("Please remember to bring your notebook to the meeting tomorrow.", tmp_path / "f.wav",
                               voice="en-us+f3", pitch=70)
    clips = {"man": man_talking_head, "kids": two_children, "women": two_people_talking,
             "synth_female": sounds.video_with_sound(tmp_path / "f.mp4", load_audio(female))}
    for key, clip in clips.items():
        _, wh = run(tmp_path / key, key, clip, assets=[audio_tags, voice_demographics])
        row = wh.rows(VOICE_DEMOGRAPHICS, video_id=key)[0]
        assert row["status"] == "ok" and row["class_probs"], key
        assert rule_violations(row) == [], (key, row)
        assert row["confidence"] == max(row["class_probs"].values())


def test_stored_rows_say_speech_over_music_and_unknown_language(tmp_path):
    from hvbench_assets.core.audio.task_predicates import is_trusted_english, speech_for_tasks

    speech = load_audio(synthesize_speech("The weather is lovely today and we will walk to the park.",
                                                 tmp_path / "en.wav"))
    song = sounds.video_with_sound(tmp_path / "song.mp4", sounds.mix(speech, sounds.piano_with_beat(), -6))
    _, wh = run(tmp_path / "song", "song", song, assets=[audio_tags])
    tags = wh.rows(AUDIO_TAGS, video_id="song")[0]
    assert tags["is_speech"] and tags["is_music"] and tags["music_s"] > 4 and tags["speech_music_s"] > 0
    assert any(t["label"] == "music" for t in tags["tags"]) and not speech_for_tasks(tags)[0]

    mandarin = synthesize_speech("今天天气很好，我们下午一起去公园散步，然后去吃晚饭。", tmp_path / "zh.wav", voice="cmn")
    clip = sounds.video_with_sound(tmp_path / "zh.mp4", load_audio(mandarin))
    _, wh = run(tmp_path / "zh", "zh", clip, assets=[audio_tags, transcript])
    row = wh.rows(TRANSCRIPT, video_id="zh")[0]
    assert (row["status"], row["language"]) == ("low_confidence", "unknown") and row["text"]
    assert row["language_evidence"]["method"].startswith("pocketsphinx") and not is_trusted_english(row)


def test_stored_rows_name_the_selected_music_and_voice_backends(tmp_path, man_talking_head, monkeypatch):
    from hvbench_assets.core.audio import cache
    from hvbench_assets.core.audio.voice import rule_violations

    monkeypatch.setattr(cache, "_MEMO", {})  # leave no decode of the shared clip behind for other tests

    music = sounds.video_with_sound(tmp_path / "music.mp4", sounds.piano_with_beat())
    _, wh = run(tmp_path / "music", "music", music, assets=[audio_tags])
    tags = wh.rows(AUDIO_TAGS, video_id="music")[0]  # defaults: YAMNet music, pitch voice
    assert tags["is_music"] and tags["music_evidence"]["method"] == "yamnet"
    assert "YAMNet" in tags["model"] and "google-coral/coralmicro" in tags["model"]
    assert tags["music_evidence"]["top_classes"][0]["label"] == "Music"

    chosen = {"audio_models": AudioModelsResource(music_detector="signal", voice_gender="mlp")}
    _, wh = run(tmp_path / "man", "man", man_talking_head, assets=[audio_tags, voice_demographics], extra=chosen)
    tags = wh.rows(AUDIO_TAGS, video_id="man")[0]
    assert tags["music_evidence"]["method"] == "signal" and "YAMNet" not in tags["model"]
    voice = wh.rows(VOICE_DEMOGRAPHICS, video_id="man")[0]
    assert voice["method"] == "mlp+pitch" and "x4nth055/gender-recognition-by-voice" in voice["model"]
    assert voice["voice_class"] == "male" and rule_violations(voice) == []


def test_audio_corrupted_after_probing_fails_naming_the_file(tmp_path):
    clip = sounds.video_with_sound(tmp_path / "tone.mp4", sounds.tone(3.0))
    res = resources(tmp_path)
    wh = res["warehouse"].get()
    wh.replace(VIDEO_PROBE, {"video_id": "bad"}, [{**probe_video(clip).as_row(), "status": "ok", "reason": None}])
    clip.write_bytes(clip.read_bytes()[:2000])  # the file breaks after ingest
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["bad"])
    result = dg.materialize([audio_tags], partition_key="bad", resources=res, instance=instance, raise_on_error=False)
    assert not result.success
    failure = result.failure_data_for_node("audio_tags").error
    assert "tone.mp4" in str(failure)
