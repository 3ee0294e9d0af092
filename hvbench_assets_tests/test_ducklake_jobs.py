"""Real Dagster runs on the DuckLake backend: the inbox sensor, `raw_video_job` and the per-clip job (probe, L1
tracks with crop clips, L2, L3, L6, L10, L7 speaker scores, and the ASD and HC tasks) write into a DuckLake whose catalog
is a real Postgres, and every row equals the same runs on the DuckDB file; the `hvbench` CLI reads them.

Both runs use their own data root: the stored media paths are relative to it, so the rows compare exactly."""

from __future__ import annotations

import json
import re
import shutil

import dagster as dg
import pytest

from hvbench_assets.cli import main as cli_main
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.pipeline_runs import (
    execute,
    ingest_inbox,
    new_clips,
    talking_clip,
    use_data_root,
    values_naming,
)

# the chain behind AVAD (its question video has the sound reversed up to a cut) and HC (rejected here: 2 people,
# fewer than 3); ASD asks only where the voice's class confirms the speaker's face, which L3 is unsure of here
CLIP_ASSETS = ["video_probe", "human_tracks", "human_verdicts", "person_count", "demographics", "audio_tags", "voice_demographics",
               "speaker_frame_scores", "speaker_scores", "audio_visual_alignment_detection", "human_counting"]
# differ between any two runs by design: when a row was written or first seen, and the run folder of the crops
VOLATILE = {"materialized_at", "first_seen", "noticed_at"}
RUN_FOLDER = re.compile(r"run-[0-9a-f-]{36}")


def _pipeline(monkeypatch, root, source, warehouse: str | None = None) -> tuple[Warehouse, str]:
    """Inbox -> raw_video_job -> clip sensor -> the per-clip assets, on a data root and Dagster home of its own."""
    data, home = root / "data", root / "home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    use_data_root(monkeypatch, data, warehouse)
    (data / "inbox").mkdir(parents=True)
    shutil.copy2(source, data / "inbox" / "talk.mp4")  # the same bytes and mtime in both runs
    from hvbench_assets.demo.main import clip_offline_labels_job

    with dg.DagsterInstance.get() as instance:
        assert ingest_inbox(instance) == ["talk"]
        (clip,) = new_clips(instance)
        assert execute(clip_offline_labels_job, instance, clip, assets=CLIP_ASSETS)
    return Warehouse(warehouse or data / "hvbench.duckdb"), clip


def _comparable(wh: Warehouse, table: str) -> list[str]:
    cols = [r["column_name"] for r in wh.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_catalog = current_database() "
        "ORDER BY ordinal_position", [table]) if r["column_name"] not in VOLATILE]
    quoted = ", ".join(f'"{c}"' for c in cols)
    rows = wh.query(f'SELECT {quoted} FROM "{table}"')
    return sorted(RUN_FOLDER.sub("run-*", json.dumps(_stable(r), sort_keys=True, default=str)) for r in rows)


def _stable(value):
    """`value` without the volatile keys, also inside JSON text (questions.label_rows names when each label row
    was written). Everything else compares exactly, per-frame speaker scores too: equal frames give equal clips and
    crops (core/media/encode.py), so the two runs measure the same pictures."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return _stable(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.mark.slow
def test_the_raw_and_clip_jobs_on_ducklake_write_the_rows_of_the_duckdb_file(postgres, tmp_path, monkeypatch, capsys):
    source = talking_clip(tmp_path / "source" / "talk.mp4", seconds=9.0)
    file_wh, clip = _pipeline(monkeypatch, tmp_path / "file", source)

    location = postgres.new_database()
    monkeypatch.setenv("HVBENCH_WAREHOUSE_DATA_PATH", str(tmp_path / "lake" / "files"))
    lake_wh, lake_clip = _pipeline(monkeypatch, tmp_path / "lake", source, warehouse=location)
    assert lake_wh.backend == "ducklake" and lake_clip == clip
    assert list((tmp_path / "lake" / "files").rglob("*.parquet"))

    tables = file_wh.table_names()
    assert {"raw_videos", "clips", "video_probe", "human_tracks", "human_track_boxes", "person_count", "audio_tags",
            "task_candidates", "questions"} <= set(tables)
    assert lake_wh.table_names() == tables
    for table in tables:
        assert _comparable(lake_wh, table) == _comparable(file_wh, table), table
    (asd,) = lake_wh.rows(QUESTIONS, abbrev="AVAD")
    assert asd["video_path"].startswith(f"media/{clip}/questions/")
    assert values_naming(lake_wh, tmp_path) == []  # media paths relative to the data root there too

    # the CLI reads the DuckLake named by HVBENCH_WAREHOUSE (still set by the second run)
    capsys.readouterr()
    assert cli_main(["status"]) == 0
    out = capsys.readouterr().out
    assert "registered files: 1" in out and str(tmp_path / "lake" / "data" / "inbox" / "talk.mp4") in out
    assert cli_main(["questions", "--candidates"]) == 0
    out = capsys.readouterr().out
    assert asd["question_id"] in out and "people=2 < 3" in out  # HC's verdict from task_candidates
    assert cli_main(["explain", asd["question_id"]]) == 0
    out = capsys.readouterr().out
    data = tmp_path / "lake" / "data"
    assert f"Question {asd['question_id']}" in out and str(data / "inbox" / "talk.mp4") in out
    assert f"question video: {data / asd['video_path']}" in out and (data / asd["video_path"]).is_file()
    assert cli_main(["warehouse", "info"]) == 0
    out = capsys.readouterr().out
    assert "ducklake" in out and "human_tracks" in out
