"""What asset pages show for warehouse-writing assets: columns, row counts, rounded numbers, source links."""

from __future__ import annotations

import dagster as dg

from hvbench_assets.core.audio.tables import AUDIO_TAGS
from hvbench_assets.core.ingest.tables import CLIPS, VIDEO_PROBE
from hvbench_assets.defs.ingest.assets import scene_clips, video_probe
from hvbench_assets.defs.labels.audio import audio_tags, transcript
from hvbench_assets.defs.metadata import materialization, rounded
from hvbench_assets.defs.resources import AudioModelsResource
from hvbench_assets.testkit.media_factory import moving_square_video
from hvbench_assets_tests.defs.test_ingest import _register


def _columns(asset, key: str) -> list[str]:
    return [c.name for c in asset.specs_by_key[dg.AssetKey(key)].metadata["dagster/column_schema"].columns]


def test_rounding_keeps_structure_and_other_values():
    assert rounded({"a": [1.23456, {"b": 2.0000001}], "c": "x"}) == {"a": [1.235, {"b": 2.0}], "c": "x"}
    meta = materialization({"f": 0.123456, "j": dg.MetadataValue.json({"s": 1.98765}), "p": dg.MetadataValue.path("/x")})
    assert meta["f"] == 0.123 and meta["j"].data == {"s": 1.988} and meta["p"] == dg.MetadataValue.path("/x")


def test_a_file_name_dagster_refuses_as_an_event_tag_still_tags_the_run(tmp_path):
    """`Café – vidéo 1.mp4` is a valid run tag but not an asset-event tag (Dagster allows [A-Za-z0-9_.-] there):
    the run is tagged, the materialization succeeds without that tag (seen in the demo's own sample name)."""
    src = moving_square_video(tmp_path / "src.mp4", seconds=3.0)
    name = "Café – vidéo 1.mp4"
    with dg.instance_for_test() as instance:
        keys, res = _register(tmp_path, instance, {name: src})
        split = dg.materialize([scene_clips], partition_key=keys[name], resources=res, instance=instance)
        assert split.success and instance.get_run_by_id(split.run_id).tags["hvbench/source"] == name
        clip = split.asset_materializations_for_node("scene_clips")[0].metadata["kept_clip_ids"].value[0]
        probed = dg.materialize([video_probe], partition_key=clip, resources=res, instance=instance)
        assert probed.success and instance.get_run_by_id(probed.run_id).tags["hvbench/source"] == name
        event = instance.get_latest_materialization_event(dg.AssetKey("video_probe"))
        assert "hvbench/source" not in event.asset_materialization.tags
        assert event.asset_materialization.tags["hvbench/range"].startswith("0.00-")


def test_ingest_and_audio_assets_show_columns_row_counts_and_source(tmp_path):
    src = moving_square_video(tmp_path / "src.mp4", seconds=3.0)
    with dg.instance_for_test() as instance:
        keys, res = _register(tmp_path, instance, {"walk.mp4": src})
        raw = keys["walk.mp4"]
        split = dg.materialize([scene_clips], partition_key=raw, resources=res, instance=instance)
        meta = split.asset_materializations_for_node("scene_clips")[0].metadata
        n = meta["clips_total"].value
        assert meta["dagster/row_count"].value == n and meta["table_row_count"].value == n
        assert meta["duration_s"].value == round(meta["duration_s"].value, 3)
        clip = meta["kept_clip_ids"].value[0]
        probed = dg.materialize([video_probe], partition_key=clip, resources=res, instance=instance)
        meta = probed.asset_materializations_for_node("video_probe")[0].metadata
        assert meta["source"] == dg.MetadataValue.path(str((tmp_path / "inbox" / "walk.mp4").resolve()))
        assert meta["source_partition"].value == f"raw_videos/{raw}" and meta["source_range_s"].value.startswith("0.00-")
        assert meta["dagster/row_count"].value == 1
        # launched without a sensor (as from the UI): the assets tag their runs and materializations themselves
        run_tags = instance.get_run_by_id(probed.run_id).tags
        assert run_tags["hvbench/source"] == "walk.mp4" and run_tags["hvbench/range"].startswith("0.00-")
        assert instance.get_run_by_id(split.run_id).tags["hvbench/source"] == "walk.mp4"
        event = instance.get_latest_materialization_event(dg.AssetKey("video_probe"))
        assert event.asset_materialization.tags["hvbench/source"] == "walk.mp4"
        labelled = dg.materialize([audio_tags, transcript], partition_key=clip, instance=instance,
                                  resources={**res, "audio_models": AudioModelsResource()})
        meta = labelled.asset_materializations_for_node("audio_tags")[0].metadata
        assert meta["dagster/row_count"].value == 1 and meta["table_row_count"].value == 1
    assert "reason" in _columns(scene_clips, "scene_clips") and len(_columns(scene_clips, "scene_clips")) == len(CLIPS.all_columns)
    assert _columns(video_probe, "video_probe") == [c for c, _ in VIDEO_PROBE.all_columns]
    assert _columns(audio_tags, "audio_tags") == [c for c, _ in AUDIO_TAGS.all_columns]
    assert "text" in _columns(transcript, "transcript")
