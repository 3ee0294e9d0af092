"""L1-L3 assets materialized through Dagster on real clips, offline backend."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.vision import (
    DEMOGRAPHICS,
    HUMAN_TRACK_BOXES,
    HUMAN_TRACKS,
    PERSON_COUNT,
    load_tracks,
)
from hvbench_assets.defs.labels.vision import (
    demographics,
    face_presence_ratio,
    human_tracks,
    person_count,
    track_boxes_complete,
)
from hvbench_assets.defs.resources import MllmResource, SettingsResource, VisionResource, WarehouseResource
from hvbench_assets.testkit.media_factory import moving_square_video


def _run(tmp_path: Path, video: Path, key: str, profile: str = "offline"):
    wh_path = tmp_path / "wh.duckdb"
    resources = {
        "settings": SettingsResource(data_dir=str(tmp_path / "data"), backend_profile=profile),
        "warehouse": WarehouseResource(path=str(wh_path)),
        "vision": VisionResource(),
    }
    wh = resources["warehouse"].get()
    wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(video).as_row(), "status": "ok", "reason": None}])
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [key])
    result = dg.materialize([human_tracks, person_count, demographics, face_presence_ratio, track_boxes_complete],
                            partition_key=key, resources=resources, instance=instance, raise_on_error=False)
    return result, wh


def test_single_person_clip_end_to_end(tmp_path, man_talking_head, dagster_home):
    result, wh = _run(tmp_path, man_talking_head, "man")
    assert result.success
    tracks = wh.rows(HUMAN_TRACKS, video_id="man")
    assert len(tracks) == 1 and tracks[0]["track_id"] == 0 and tracks[0]["status"] == "ok"
    assert tracks[0]["backend"] == "offline" and "yunet" in tracks[0]["model"] and "dlib_face_recognition" in tracks[0]["model"]
    # no body-crop clip: this run does not describe appearance (L4 cuts its own then)
    assert Path(tracks[0]["face_clip_path"]).is_file() and tracks[0]["body_clip_path"] is None
    assert wh.count(HUMAN_TRACK_BOXES, video_id="man") == tracks[0]["n_frames"]
    count = wh.rows(PERSON_COUNT, video_id="man")[0]
    assert count["person_count"] == 1 and count["status"] == "ok" and "track" in count["method"]
    demo = wh.rows(DEMOGRAPHICS, video_id="man")
    # the offline gender ensemble: its three models agree on him, so the row is ok (docs/demographics.md)
    assert [(d["track_id"], d["status"]) for d in demo] == [(0, "ok")], demo
    assert demo[0]["gender"] == "male" and demo[0]["gender_share"] == 1.0 and demo[0]["age_class"] == "adult"
    assert demo[0]["gender_confidence"] >= 0.625 and demo[0]["reason"] is None
    assert demo[0]["method"] == "ensemble-v1" and "mini-Xception" in demo[0]["model"] and "sha256" in demo[0]["model"]
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {"face_presence_ratio": True, "track_boxes_complete": True}
    mat = result.asset_materializations_for_node("human_tracks")[0]
    assert mat.metadata["tracks"].value == 1 and mat.metadata["video_decodes"].value == 1


def test_clip_without_faces_stores_explicit_rows(tmp_path, dagster_home):
    video = moving_square_video(tmp_path / "square.mp4", seconds=2.0)
    result, wh = _run(tmp_path, video, "square")
    assert result.success
    assert [(r["track_id"], r["status"]) for r in wh.rows(HUMAN_TRACKS, video_id="square")] == [(None, "no_faces")]
    assert load_tracks(wh, "square") == []
    assert wh.rows(PERSON_COUNT, video_id="square")[0]["person_count"] == 0
    assert [r["status"] for r in wh.rows(DEMOGRAPHICS, video_id="square")] == ["no_faces"]
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks["face_presence_ratio"] is False  # a WARN, the run still succeeds


def test_full_profile_fails_fast_naming_the_missing_package(tmp_path, two_children, dagster_home):
    result, wh = _run(tmp_path, two_children, "kids", profile="full")
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    text = str(failure.event_specific_data.error)
    assert "hvbench[full]" in text and ("ultralytics" in text or "deepface" in text)
    assert wh.count(HUMAN_TRACKS, video_id="kids") == 0


def test_vision_modules_define_assets_checks_and_resource():
    # only this stage's modules: the whole project is loaded by the lead's definitions test
    from hvbench_assets.defs.labels import vision
    from hvbench_assets.defs.resources import build_resources

    d = dg.Definitions.merge(
        dg.Definitions(assets=dg.load_assets_from_modules([vision]),
                       asset_checks=dg.load_asset_checks_from_modules([vision])),
        dg.Definitions(resources={"vision": build_resources()["vision"]}),
        dg.Definitions(resources={"settings": SettingsResource(), "warehouse": WarehouseResource(),
                                  "mllm": MllmResource()}),  # human_verdicts asks the describer when one is set
    )
    graph = d.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"human_tracks", "person_count", "demographics", "human_verdicts"} <= keys
    assert {c.name for c in graph.asset_check_keys} == {"face_presence_ratio", "track_boxes_complete"}
    assert isinstance(d.resources["vision"], VisionResource)


def test_unreadable_clip_fails_its_partition_naming_the_file(tmp_path, man_talking_head, dagster_home):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video at all" * 100)
    wh = WarehouseResource(path=str(tmp_path / "wh.duckdb"))
    row = {**probe_video(man_talking_head).as_row(), "path": str(bad), "status": "ok", "reason": None}
    wh.get().replace(VIDEO_PROBE, {"video_id": "bad"}, [row])
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["bad"])
    result = dg.materialize(
        [human_tracks], partition_key="bad", instance=instance, raise_on_error=False,
        resources={"settings": SettingsResource(data_dir=str(tmp_path / "data")), "warehouse": wh,
                   "vision": VisionResource()},
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "broken.mp4" in str(failure.event_specific_data.error)


def test_the_quick_detection_size_is_a_resource_setting():
    """The launchpad can turn YuNet's quick pass off (0) or set its size; by default the detector's own runs."""
    from hvbench_assets.core.vision import pipeline

    backend = VisionResource().backend("offline")
    assert pipeline._resolved(VisionResource().tracking_params(), backend).quick_max_side == 320
    assert pipeline._resolved(VisionResource(quick_max_side=0).tracking_params(), backend).quick_max_side == 0
    assert VisionResource(quick_max_side=400).tracking_params().quick_max_side == 400


def test_demographics_settings_choose_the_offline_model_and_rule():
    from hvbench_assets.core.vision.demographics import MEASURED, SsrNetDemographics, UtkFaceTfliteDemographics
    from hvbench_assets.core.vision.gender_ensemble import EnsembleDemographics

    vision = VisionResource()
    default = vision.demographics_estimator("offline")
    assert isinstance(default, EnsembleDemographics)
    assert default.measured_accuracy == MEASURED[("ensemble", 0.25)][0] == 0.93  # over the shared clips and composites
    assert vision.demographics_rule("offline").min_accuracy == 0.9 and vision.demographics_rule("full").min_accuracy == 0.0
    assert isinstance(VisionResource(demographics_model="ssrnet").demographics_estimator("offline"), SsrNetDemographics)
    tflite = VisionResource(demographics_model="utkface-tflite", demographics_margin=0.1).demographics_estimator("offline")
    assert isinstance(tflite, UtkFaceTfliteDemographics) and tflite.margin == 0.1 and tflite.measured_accuracy == 0.5
    assert VisionResource(demographics_model="none").demographics_estimator("offline") is None
    assert VisionResource(demographics_margin=0.2).demographics_estimator("offline").measured_accuracy is None
