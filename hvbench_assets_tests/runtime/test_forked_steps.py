"""The per-clip job with `transcript` forked from the run's process (runtime/executor.py) on a generated clip with
espeak-ng speech and two faces: transcript and L1 (human_tracks) both materialize with their own events, the
transcript in the child, and every row equals the one the sequential in-process executor writes. L7's scores
(`speaker_frame_scores`) and the ASD question (its video encoded in the child) are forked too once a core is free."""

from __future__ import annotations

import os
import re
import shutil

import dagster as dg
import pytest

from hvbench_assets.core.audio.tables import TRANSCRIPT
from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.tasks.store import TASK_CANDIDATES
from hvbench_assets.core.vision.tables import HUMAN_TRACKS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.runtime.executor import machine_cores
from hvbench_assets.runtime.instance import PooledSqliteEventLogStorage
from hvbench_assets.core.settings import PROJECT_ROOT
from hvbench_assets_tests.pipeline_runs import ingest_inbox, new_clips, talking_clip, use_data_root

ASSETS = ["video_probe", "audio_tags", "transcript", "human_tracks"]
L7_CHAIN = ["voice_demographics", "person_count", "demographics", "speaker_frame_scores", "speaker_scores", "human_verdicts",
            "active_speaker_detection"]
VOLATILE = {"materialized_at"}


def _run(instance, clip: str, run_config: dict, assets=ASSETS) -> dg.ExecuteJobResult:
    from hvbench_assets.demo.main import clip_offline_labels_job

    return dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance, run_config=run_config,
                          asset_selection=[dg.AssetKey(a) for a in assets], tags={"dagster/partition": clip})


def _rows(wh: Warehouse, clip: str) -> dict[str, list[dict]]:
    """Rows without their time stamps; crop paths name their run (media/<clip>/human_tracks/run-<id>/...)."""
    out = {}
    for spec in (TRANSCRIPT, HUMAN_TRACKS):
        rows = [{k: re.sub(r"run-[0-9a-f-]{36}", "run-*", v) if isinstance(v, str) else v
                 for k, v in r.items() if k not in VOLATILE} for r in wh.rows(spec, video_id=clip)]
        out[spec.name] = sorted(rows, key=repr)
    return out


@pytest.mark.slow
@pytest.mark.skipif(machine_cores() < 2, reason="a forked step needs a second core")
def test_transcript_forked_beside_l1_materializes_the_rows_of_the_sequential_run(tmp_path, monkeypatch, dagster_home):
    shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", dagster_home / "dagster.yaml")  # the pooled event log
    data = tmp_path / "hvdata"
    use_data_root(monkeypatch, data)
    talking_clip(data / "inbox" / "talk.mp4", seconds=3.0)
    wh = Warehouse(data / "hvbench.duckdb")
    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
        assert ingest_inbox(instance) == ["talk"]
        (clip,) = new_clips(instance)

        # forked first: the run's process then has no recogniser yet, so the child's is fresh like the sequential
        # run's (a reused pocketsphinx decoder carries its cepstral-mean state over and moves word confidences)
        shutil.rmtree(data / "media", ignore_errors=True)  # both runs decode and crop afresh
        forked = _run(instance, clip, {}, ASSETS + L7_CHAIN)  # the project's executor as configured
        assert forked.success
        l7 = wh.rows(SPEAKER_SCORES, video_id=clip)
        assert len(l7) == 2 and all(r["status"] == "ok" for r in l7), l7
        (asd,) = [r for r in wh.rows(TASK_CANDIDATES, video_id=clip) if r["abbrev"] == "ASD"]
        after = _rows(wh, clip)
        assert after["transcript"][0]["status"] in ("ok", "low_confidence"), after["transcript"]
        assert len(after["human_tracks"]) == 2

        shutil.rmtree(data / "media", ignore_errors=True)
        sequential = _run(instance, clip, {"execution": {"config": {"in_process": {}}}})
        assert sequential.success
        before = _rows(wh, clip)
        for table, rows in before.items():
            assert len(after[table]) == len(rows), table
            for a, b in zip(after[table], rows):
                assert a == b, (table, {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)})

        pids: dict[str, set[int]] = {}
        kinds: dict[str, list[str]] = {}
        for rec in instance.all_logs(forked.run_id):
            ev = rec.dagster_event
            if ev is not None and ev.step_key in ASSETS + L7_CHAIN and ev.event_type_value.startswith(
                    ("STEP_", "ASSET_MATERIALIZATION")) and ev.event_type_value != "ASSET_MATERIALIZATION_PLANNED":
                pids.setdefault(ev.step_key, set()).add(ev.pid)
                kinds.setdefault(ev.step_key, []).append(ev.event_type_value)
        for key in ("transcript", "human_tracks", "speaker_frame_scores", "speaker_scores", "active_speaker_detection"):
            assert kinds[key][0] == "STEP_START" and kinds[key][-1] == "STEP_SUCCESS", kinds[key]
            assert "ASSET_MATERIALIZATION" in kinds[key]
        assert pids["human_tracks"] == {os.getpid()}  # the run's process (execute_job runs it here)
        (child,) = pids["transcript"]
        assert child != os.getpid()
        # L7 forks when the transcript's child is gone by then; its question step always finds the core free
        (asd_child,) = pids["active_speaker_detection"]
        assert asd_child not in (os.getpid(), child) and len(pids["speaker_frame_scores"]) == 1
        assert pids["speaker_scores"] == {os.getpid()}  # the verdicts are light: the run's process
        assert asd["status"] and asd["rule"], asd  # a verdict, written by the child
        for key in ASSETS:  # lineage: each asset has a materialization from each run
            runs = {e.run_id for e in instance.fetch_materializations(dg.AssetKey(key), limit=10).records}
            assert runs == {forked.run_id, sequential.run_id}, key
