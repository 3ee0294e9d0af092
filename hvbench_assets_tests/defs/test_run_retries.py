"""The project's instance settings (dagster_home/dagster.yaml): a run that fails on a configuration
error is not re-run by the retry daemon; a crashed run still is. A new DAGSTER_HOME gets those settings."""

from __future__ import annotations


import dagster as dg
from dagster._core.events import RunFailureReason
from dagster._core.execution.retries import auto_reexecution_should_retry_run
from dagster._core.storage.tags import RUN_FAILURE_REASON_TAG, WILL_RETRY_TAG
from dagster._daemon.auto_run_reexecution.auto_run_reexecution import filter_runs_to_should_retry

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.settings import seed_dagster_home
from hvbench_assets.defs.labels.descriptions import video_caption
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import MllmResource, WarehouseResource
from hvbench_assets.testkit.media_factory import moving_square_video


def test_configuration_error_leaves_one_failed_run(tmp_path, monkeypatch):
    home = tmp_path / "home"
    assert seed_dagster_home(home)  # the project's dagster.yaml
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("HVBENCH_DESCRIBER_MODEL", raising=False)
    models = tmp_path / "models.toml"  # a registry without a describer: the user forgot to choose one
    models.write_text('[models.some_vlm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel_id = "some-vlm"\n')
    wh = WarehouseResource(path=str(tmp_path / "wh.duckdb"))
    clip = moving_square_video(tmp_path / "c.mp4", seconds=1.5)
    wh.get().replace(VIDEO_PROBE, {"video_id": "c__000"},
                     [{**probe_video(clip).as_row(), "status": "ok", "reason": None}],
                     provenance={"backend": "pyav", "model": "ffmpeg", "code_version": "t"})

    with dg.DagsterInstance.get() as instance:
        assert instance.run_retries_enabled and instance.run_retries_max_retries == 1
        instance.add_dynamic_partitions(videos_partitions.name, ["c__000"])
        result = dg.materialize([video_caption], partition_key="c__000", instance=instance, raise_on_error=False,
                                resources={"warehouse": wh, "mllm": MllmResource(models_file=str(models))})
        assert not result.success
        failure = next(e for e in result.all_events if e.is_step_failure)
        assert "HVBENCH_DESCRIBER_MODEL" in failure.step_failure_data.error.message
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].status == dg.DagsterRunStatus.FAILURE
        assert runs[0].tags[RUN_FAILURE_REASON_TAG] == RunFailureReason.STEP_FAILURE.value
        assert runs[0].tags[WILL_RETRY_TAG] == "false"
        assert list(filter_runs_to_should_retry(runs, instance)) == []  # what the retry daemon would launch
        # a crashed run (worker killed, OOM) is still retried once
        crashed = runs[0].with_tags({**runs[0].tags, RUN_FAILURE_REASON_TAG: RunFailureReason.UNEXPECTED_TERMINATION.value})
        assert auto_reexecution_should_retry_run(instance, crashed, RunFailureReason.UNEXPECTED_TERMINATION)


def test_a_new_dagster_home_gets_the_project_settings_and_an_existing_one_is_left_alone(tmp_path):
    new = tmp_path / "new" / "home"  # not there yet, as with DAGSTER_HOME=/tmp/x/home scripts/demo.sh
    assert seed_dagster_home(new)
    with dg.DagsterInstance.from_config(str(new)) as instance:
        queue = instance.get_concurrency_config().run_queue_config
        assert queue.max_concurrent_runs == 2  # Dagster's default would be 10 on any machine
        assert instance.run_coordinator.dequeue_interval_seconds == 1
        assert instance.run_retries_enabled
    assert not seed_dagster_home(new)  # seeded once; a user's edits stay
    used = tmp_path / "used"
    (used / "storage").mkdir(parents=True)  # an instance on Dagster's defaults: not ours to change
    assert not seed_dagster_home(used) and not (used / "dagster.yaml").exists()
    own = tmp_path / "own"
    own.mkdir()
    (own / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    assert not seed_dagster_home(own) and "telemetry" in (own / "dagster.yaml").read_text()
