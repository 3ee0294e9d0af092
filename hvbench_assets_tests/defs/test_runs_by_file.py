"""Every run is findable by each source file it touched (defs/run_tags.py): a run over clips of two files carries
one `hvbench/file/<key>` tag per file, whether clip_sensor requested it or it was launched without the sensors' tags
(a backfill's range run, a range launched from the job page), and the instance's run filter finds it by either
file; `hvbench runs --file` prints that filter and lists the runs."""

from __future__ import annotations

import dagster as dg
import pytest

from hvbench_assets.runtime.batch import BATCH_TAG, range_tags
from hvbench_assets.defs.run_tags import FILE_TAG_PREFIX, SOURCE_TAG, file_filter, files_tags, source_tags
from hvbench_assets_tests.pipeline_runs import _apply, _resources, ingest_inbox, request_keys, talking_clip, use_data_root


def test_the_tags_of_one_and_of_several_files(tmp_path, monkeypatch):
    use_data_root(monkeypatch, tmp_path)  # stored paths are relative to it
    inbox = tmp_path / "inbox"
    one = files_tags(inbox, [("a", "inbox/a.mp4"), ("a", "inbox/a.mp4")])
    assert one == {"hvbench/file/a": "a.mp4", SOURCE_TAG: "a.mp4"}
    two = files_tags(inbox, [("a", "inbox/a.mp4"), ("b_2", "inbox/sub/b 2.mp4")])
    assert two == {"hvbench/file/a": "a.mp4", "hvbench/file/b_2": "sub/b 2.mp4"}  # no single source
    assert files_tags(inbox, [("a", "inbox/a.mp4"), (None, None)]) == {"hvbench/file/a": "a.mp4"}  # a clip unknown
    assert source_tags(inbox, "inbox/a.mp4", 0, 2.5, "a") == {
        SOURCE_TAG: "a.mp4", "hvbench/file/a": "a.mp4", "hvbench/range": "0.00-2.50s"}
    assert file_filter("b_2", "sub/b 2.mp4") == {"hvbench/file/b_2": "sub/b 2.mp4"}


@pytest.mark.slow
def test_a_run_over_two_files_is_found_by_either(tmp_path, monkeypatch, dagster_home, capsys):
    from hvbench_assets.cli import main as cli_main
    from hvbench_assets.defs.ingest.sensors import clip_sensor
    from hvbench_assets.demo.main import clip_offline_labels_job

    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    for name in ("a_talk", "b_talk"):
        talking_clip(data / "inbox" / f"{name}.mp4", seconds=2.5)
    with dg.DagsterInstance.get() as instance:
        assert sorted(ingest_inbox(instance)) == ["a_talk", "b_talk"]
        # the sensor's batch over both files' clips names both
        (request,) = _apply(clip_sensor(dg.build_sensor_context(instance=instance, resources=_resources())), instance)
        assert request.tags[BATCH_TAG] == "2"
        assert {k: v for k, v in request.tags.items() if k.startswith(FILE_TAG_PREFIX)} == {
            "hvbench/file/a_talk": "a_talk.mp4", "hvbench/file/b_talk": "b_talk.mp4"}
        assert SOURCE_TAG not in request.tags
        clips = request_keys(request, instance)
        sensor_run = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                    asset_selection=[dg.AssetKey("video_probe")], tags=request.tags)
        assert sensor_run.success
        # a range run without the sensors' tags (a backfill's, or a range launched from the job page): the assets
        # add one tag per file
        bare_run = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                  asset_selection=[dg.AssetKey("video_probe")], tags=range_tags(clips[0], clips[-1]))
        assert bare_run.success
        tags = instance.get_run_by_id(bare_run.run_id).tags
        assert tags["hvbench/file/a_talk"] == "a_talk.mp4" and tags["hvbench/file/b_talk"] == "b_talk.mp4"
        assert SOURCE_TAG not in tags

        for name in ("a_talk", "b_talk"):
            found = {r.run_id: r.job_name for r in instance.get_runs(
                dg.RunsFilter(tags=file_filter(name, f"{name}.mp4")))}
            # the file's own ingest run and both runs over the two files' clips
            assert sensor_run.run_id in found and bare_run.run_id in found, name
            assert sorted(found.values()) == sorted(["raw_video_job", "clip_offline_labels_job",
                                                     "clip_offline_labels_job"]), found
        # the single-file filter still finds the ingest run alone
        (ingest,) = instance.get_runs(dg.RunsFilter(tags={SOURCE_TAG: "a_talk.mp4"}))
        assert ingest.job_name == "raw_video_job"

    capsys.readouterr()
    assert cli_main(["runs", "--file", "b_talk.mp4"]) == 0
    out = capsys.readouterr().out
    assert "hvbench/file/b_talk=b_talk.mp4" in out
    assert "/runs?q[]=tag%3Ahvbench%2Ffile%2Fb_talk%3Db_talk.mp4" in out
    assert sensor_run.run_id in out and bare_run.run_id in out
    assert cli_main(["runs", "--file", "a_talk"]) == 0  # the raw_videos key names the file too
    out = capsys.readouterr().out
    assert out.startswith("a_talk.mp4 (raw_videos/a_talk)") and "hvbench/file/a_talk=a_talk.mp4" in out
    assert cli_main(["runs", "--file", "nothing.mp4"]) == 2
