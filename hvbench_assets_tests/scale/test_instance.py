"""The cluster's Dagster instance (deploy/cluster/dagster.yaml as scripts/cluster.sh renders it) on a real
Postgres, and which runs ask Ray for a GPU."""

import json
import sys
from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.scale.cluster import Options, render_instance
from hvbench_assets.scale.gpu import GPU_ASSETS, RAY_CONFIG_TAG, gpu_wanted, ray_run_tags
from hvbench_assets.testkit.postgres import Postgres

pytest.importorskip("dagster_ray", reason="the scale extra is not installed (pip install -e '.[scale]')")


def test_runs_ask_for_a_gpu_in_the_full_profile_or_when_told():
    assert ray_run_tags(GPU_ASSETS, profile="offline", override="") == {}
    assert json.loads(ray_run_tags(GPU_ASSETS, profile="full", override="")[RAY_CONFIG_TAG]) == {"num_gpus": 1}
    assert ray_run_tags(["scene_clips", "video_probe"], profile="full", override="") == {}  # nothing on a GPU
    assert gpu_wanted("offline", "on") and not gpu_wanted("full", "off")
    with pytest.raises(ValueError, match="HVBENCH_RAY_GPU"):
        gpu_wanted("full", "yes")


def test_cluster_instance_keeps_runs_and_events_in_postgres_and_launches_runs_on_ray(tmp_path, monkeypatch):
    from dagster_postgres import PostgresRunStorage
    from dagster_ray import RayRunLauncher

    pg = Postgres(tmp_path / "pg")
    try:
        pg.server.psql("CREATE DATABASE dagster;")
        home = tmp_path / "home"
        render_instance(Options(tmp_path, head_cpus=2, worker_cpus=2, worker_gpus=1), home)
        monkeypatch.setenv("HVBENCH_DAGSTER_PG_URL", f"postgresql+psycopg2://postgres@/dagster?host={pg.socket_dir}")
        monkeypatch.setenv("HVBENCH_RAY_JOBS_ADDRESS", "http://127.0.0.1:8265")
        with dg.DagsterInstance.from_config(str(home)) as instance:
            assert isinstance(instance.run_storage, PostgresRunStorage)
            launcher = instance.run_launcher
            assert isinstance(launcher, RayRunLauncher) and launcher.address == "http://127.0.0.1:8265"
            # the Ray job finds the `dagster` entry point of this environment
            path = launcher.runtime_env["env_vars"]["PATH"].split(":")
            assert path[0] == str(Path(sys.executable).parent) and (Path(path[0]) / "dagster").exists()
            assert {"HVBENCH_WAREHOUSE", "HVBENCH_DATA_DIR", "DAGSTER_HOME"} <= set(launcher.env_vars)
            assert instance.run_retries_enabled and instance.run_retries_max_retries == 1
            queue = instance.get_concurrency_config().run_queue_config
            assert queue.max_concurrent_runs == 4
            # GPU runs beyond the cluster's GPUs wait in Dagster's queue, not in Ray's (where they would time out)
            assert queue.tag_concurrency_limits == [
                {"key": RAY_CONFIG_TAG, "value": json.dumps({"num_gpus": 1}), "limit": 1}]
            instance.add_dynamic_partitions("videos", ["a"])  # a second connection sees it: shared storage
        with dg.DagsterInstance.from_config(str(home)) as again:
            assert again.get_dynamic_partitions("videos") == ["a"]
    finally:
        pg.close()
