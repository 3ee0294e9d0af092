"""L7 end to end with the real L1 assets: tracks and face-crop clips from human_tracks, then speaker_scores.

The shared clips' label chains come from the session's label cache (real_labels: the same offline assets and
resources as CHAIN), which the task, synthesis and review tests read too; generated clips run CHAIN here."""

import dagster as dg
import pytest

from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.vision.tables import HUMAN_TRACKS, load_tracks, number_tracks
from hvbench_assets.defs.labels.audio import audio_tags, voice_demographics
from hvbench_assets.defs.labels.speakers import speaker_frame_scores, speaker_scores
from hvbench_assets.defs.labels.vision import demographics, human_tracks, person_count
from hvbench_assets.defs.resources import VisionResource, WarehouseResource
from hvbench_assets.testkit.label_chain import LABELS, materialize
from hvbench_assets.testkit.media_factory import moving_square_video
from hvbench_assets_tests.defs.test_audio_assets import run
from hvbench_assets_tests.real_labels import label_metadata, labelled

CHAIN = [audio_tags, voice_demographics, human_tracks, person_count, demographics, speaker_frame_scores, speaker_scores]


def run_chain(tmp_path, key, path):
    return run(tmp_path, key, path, assets=CHAIN, extra={"vision": VisionResource()})


def cached_chain(tmp_path_factory, name, key):
    """A fresh copy (root with wh.duckdb and data/) of shared clip `name`'s offline labels, CHAIN included."""
    assert {a.key for a in CHAIN} <= {a.key for a in LABELS}
    root = labelled(tmp_path_factory, name, key)
    return root, WarehouseResource(path=str(root / "wh.duckdb")).get()


def test_talking_head_has_exactly_one_speaker(tmp_path_factory):
    _, wh = cached_chain(tmp_path_factory, "man_talking_head.mp4", "man")
    rows = wh.rows(SPEAKER_SCORES, video_id="man", order_by="track_id")
    tracks = wh.rows(HUMAN_TRACKS, video_id="man")
    assert len(rows) == len(tracks) >= 1
    speakers = [r for r in rows if r["speaking"]]
    assert len(speakers) == 1
    r = speakers[0]
    assert r["status"] == "ok" and r["backend"] == "offline" and r["fps"] == 25.0
    assert len(r["scores"]) == r["n_frames"] and r["longest_run"] > r["min_run"] == 12
    # offline L3 (the gender ensemble) reads him as male, as L10 hears him: voice and face agree, no veto
    assert r["face_class"] == "male" and r["veto_reason"] is None
    assert r["voice_class"] == "male"


def test_five_people_grid_only_the_man_speaks(tmp_path_factory):
    """Five faces side by side; the only voice is the man's (right panel) while the women's and the
    girls' lips move without their sound: only his track(s) speak, and he is one person."""
    from hvbench_assets.core.speakers.persons import speaking_persons
    from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES, PERSON_COUNT

    root, _ = cached_chain(tmp_path_factory, "five_people_grid.mp4", "grid")
    result, wh = materialize(root, "grid", [speaker_scores])  # once more, for its materialization's metadata
    assert result.success
    rows = wh.rows(SPEAKER_SCORES, video_id="grid", order_by="track_id")
    assert len(rows) >= 5 and all(r["status"] == "ok" for r in rows)
    centre_x = {}
    for b in wh.rows(HUMAN_TRACK_BOXES, video_id="grid"):
        centre_x.setdefault(b["track_id"], []).append((b["face_x1"] + b["face_x2"]) / 2)
    man = {t for t, xs in centre_x.items() if sum(xs) / len(xs) > 1120}  # the right panel starts at x = 1120
    speaking = {r["track_id"] for r in rows if r["speaking"]}
    assert speaking and speaking <= man, (speaking, man)
    talkers = speaking_persons(rows, wh.rows(PERSON_COUNT, video_id="grid")[0])
    assert len(talkers) == 1 and set(talkers[0]) & man
    assert all(r["person_speaking"] == (r["person_tracks"] == talkers[0]) for r in rows)
    meta = result.asset_materializations_for_node("speaker_scores")[0].metadata
    assert meta["speakers"].value == 1 and "data:image/png;base64," in meta["score_plot"].value
    preview = meta["preview"].value.splitlines()
    assert "best score" in preview[0] and len(preview) == 2 + len(rows)  # one line per track, its margin shown
    # each plot line and preview line names its person as the human_tracks key frame does: number (left to right)
    # and track id
    numbers = number_tracks(load_tracks(wh, "grid"))
    by_x = sorted(centre_x, key=lambda t: sum(centre_x[t]) / len(centre_x[t]))
    assert [numbers[t] for t in by_x] == sorted(numbers.values())
    lines = meta["score_plot_lines"].value
    assert lines == [f"P{numbers[r['track_id']]} t{r['track_id']}" + (" speaks" if r["speaking"] else "")
                     for r in rows if r["scores"]]
    assert all(f"| {r['track_id']} | {numbers[r['track_id']]} |" in meta["preview"].value for r in rows)
    key_frame = label_metadata(tmp_path_factory, "five_people_grid.mp4", "grid")["human_tracks"]
    assert len(key_frame["people_on_key_frame"].value) >= 5
    assert set(key_frame["people_on_key_frame"].value) <= {f"P{n} t{t}" for t, n in numbers.items()}
    frames = label_metadata(tmp_path_factory, "five_people_grid.mp4", "grid")["speaker_frame_scores"]
    assert frames["scored_tracks"].value == len(rows) and frames["frames"].value == sum(len(r["scores"]) for r in rows)
    assert all(f"| {r['track_id']} | ok | {len(r['scores'])} | {max(r['scores']):+.2f} |" in frames["preview"].value
               for r in rows)


def test_tone_clip_has_no_speaker(tmp_path):
    clip = moving_square_video(tmp_path / "tone.mp4", seconds=2.0, tone_hz=330.0)
    result, wh = run_chain(tmp_path, "tone", clip)
    assert result.success
    rows = wh.rows(SPEAKER_SCORES, video_id="tone")
    assert rows and not any(r["speaking"] for r in rows)
    assert {r["status"] for r in rows} <= {"no_speech", "no_faces"}


def test_clip_without_audio_gets_status_rows(tmp_path):
    clip = moving_square_video(tmp_path / "mute.mp4", seconds=2.0, tone_hz=None)
    result, wh = run_chain(tmp_path, "mute", clip)
    assert result.success
    rows = wh.rows(SPEAKER_SCORES, video_id="mute")
    assert rows and not any(r["speaking"] for r in rows)
    assert {r["status"] for r in rows} <= {"no_audio", "no_faces"} and all(r["reason"] for r in rows)
    assert {r["method"] for r in rows} == {"verified"}  # the configured method, though nothing was scored


def test_rules_rerun_on_the_stored_frame_scores(tmp_path_factory):
    """speaker_scores reads the network's per-frame scores from speaker_frame_scores: a stricter run rule reruns
    only the verdicts (no face-crop clip is read), on the very same scores; without frame scores it says what to
    materialize."""
    from hvbench_assets.core.speakers.tables import SPEAKER_FRAME_SCORES
    from hvbench_assets.defs.resources import AudioModelsResource, SettingsResource

    root, wh = cached_chain(tmp_path_factory, "man_talking_head.mp4", "man")
    before = wh.rows(SPEAKER_SCORES, video_id="man", order_by="track_id")
    frames = wh.rows(SPEAKER_FRAME_SCORES, video_id="man", order_by="track_id")
    assert [r["scores"] for r in frames] == [r["scores"] for r in before]
    talker = next(r for r in before if r["speaking"])
    for clip in root.rglob("*_face.mp4"):
        clip.unlink()  # the verdicts never read a crop clip
    resources = {"settings": SettingsResource(data_dir=str(root / "data")),
                 "warehouse": WarehouseResource(path=str(root / "wh.duckdb")),
                 "audio_models": AudioModelsResource(speaking_min_run=talker["longest_run"])}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["man"])
    assert dg.materialize([speaker_scores], partition_key="man", resources=resources, instance=instance).success
    after = wh.rows(SPEAKER_SCORES, video_id="man", order_by="track_id")
    assert [r["scores"] for r in after] == [r["scores"] for r in before]
    assert not any(r["speaking"] for r in after) and {r["min_run"] for r in after} == {talker["longest_run"]}
    wh.execute("DELETE FROM speaker_frame_scores")
    with pytest.raises(dg.Failure, match="materialize speaker_frame_scores first"):
        dg.materialize([speaker_scores], partition_key="man", resources=resources, instance=instance)


def test_resources_are_registered():
    from hvbench_assets.definitions import defs

    d = defs()
    for key in ("speaker_frame_scores", "speaker_scores"):
        assert d.resolve_assets_def(key).group_names_by_key[dg.AssetKey(key)] == "labels"
    assert "audio_models" in (d.resources or {})


def test_two_people_talking_flags_only_the_front_woman(tmp_path_factory):
    """The front woman talks from 13 s on with her head pulled by the braiding (lip-sync cannot tell her lips from
    chance; Light-ASD's score falls when her sound is shifted); the girl braiding her hair, behind her on the right,
    never speaks. Only a track of the front woman may be flagged."""
    _, wh = cached_chain(tmp_path_factory, "two_people_talking.mp4", "tpt")
    rows = wh.rows(SPEAKER_SCORES, video_id="tpt", order_by="track_id")
    assert rows and all(r["fps"] == 30.0 and r["status"] == "ok" for r in rows)
    centre = {t.track_id: (t.boxes[0].face[0] + t.boxes[0].face[2]) / 2 for t in load_tracks(wh, "tpt")}
    flagged = [r["track_id"] for r in rows if r["speaking"]]
    assert all(centre[t] < 240 for t in flagged), (flagged, centre)  # the front woman's face lies left of 240 px
    assert all((r["first_frame"] + r["longest_run_start"]) / 30.0 >= 13.0 for r in rows if r["speaking"])


def _full_profile(tmp_path, **audio_models):
    from hvbench_assets.defs.resources import AudioModelsResource, SettingsResource

    return {"settings": SettingsResource(data_dir=str(tmp_path / "data"), backend_profile="full"),
            "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")),
            "audio_models": AudioModelsResource(**audio_models)}


def _materialize_man(resources):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["man"])
    return dg.materialize([speaker_frame_scores, speaker_scores], partition_key="man", resources=resources,
                          instance=instance)


def test_full_profile_runs_light_asd_from_the_configured_weights(tmp_path_factory):
    import torch

    from hvbench_assets.core.audio.tables import AUDIO_TAGS
    from hvbench_assets.core.speakers.light_asd import build_network

    tmp_path, wh = cached_chain(tmp_path_factory, "man_talking_head.mp4", "man")  # offline audio_tags and tracks
    weights = tmp_path / "light_asd.model"
    torch.manual_seed(0)
    torch.save(build_network().state_dict(), weights)  # random weights: the wiring is under test, not accuracy
    full = _full_profile(tmp_path, light_asd_weights=str(weights), light_asd_windows_s=[1.0], speaker_method="light_asd")
    assert _materialize_man(full).success
    assert wh.rows(AUDIO_TAGS, video_id="man")[0]["backend"] == "offline"
    rows = wh.rows(SPEAKER_SCORES, video_id="man")
    assert rows and all(r["backend"] == "full" and r["method"] == "light_asd" for r in rows)
    assert all(r["model"].startswith("Light-ASD (torch on cpu)") and str(weights) in r["model"] for r in rows)
    assert all(len(r["scores"]) == r["n_frames"] and r["fps"] == 25.0 for r in rows)


def test_full_profile_defaults_to_the_shipped_light_asd_weights(tmp_path_factory):
    tmp_path, wh = cached_chain(tmp_path_factory, "man_talking_head.mp4", "man")
    assert _materialize_man(_full_profile(tmp_path, light_asd_windows_s=[1.0, 2.0])).success
    rows = wh.rows(SPEAKER_SCORES, video_id="man")
    assert rows and all(r["backend"] == "full" and r["method"] == "verified" for r in rows)
    assert all("light_asd_pretrain_AVA_CVPR.model" in r["model"] and "torch on cpu" in r["model"] for r in rows)
    assert sum(r["speaking"] for r in rows) == 1


def test_full_profile_with_a_missing_configured_checkpoint_fails_clearly(tmp_path_factory):
    tmp_path, _ = cached_chain(tmp_path_factory, "man_talking_head.mp4", "man")
    full = _full_profile(tmp_path, light_asd_weights=str(tmp_path / "nowhere.model"))
    with pytest.raises(dg.Failure, match="pretrain_AVA_CVPR.model"):
        _materialize_man(full)
