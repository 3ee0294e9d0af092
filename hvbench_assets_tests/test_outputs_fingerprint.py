"""The fingerprint behind benchmarks/outputs_unchanged.py: two runs that differ only in times, paths, ids and code
versions print the same; a changed row or file content does not."""

from __future__ import annotations

import json

import duckdb

from hvbench_assets.testkit.outputs import differences, fingerprint


def _run(root, answer="B", when="2026-11-29 05:00:00", version="3", extra_row=False, run="0f2b8dcd", latency=0.004):
    root.mkdir(parents=True)
    with duckdb.connect(str(root / "hvbench.duckdb")) as con:
        con.execute("CREATE TABLE questions (question_id TEXT, answer TEXT, video_path TEXT, code_version TEXT, "
                    "materialized_at TIMESTAMP)")
        rows = [("q1", answer, f"{root}/media/q1.mp4", version, when), ("q2", "A", f"{root}/media/q2.mp4", version, when)]
        con.executemany("INSERT INTO questions VALUES (?, ?, ?, ?, ?)", rows[::-1] if extra_row else rows)
        con.execute("CREATE TABLE model_calls (response TEXT, face_clip_path TEXT, latency_s DOUBLE, answered_at TIMESTAMP)")
        con.execute("INSERT INTO model_calls VALUES (?, ?, ?, ?)",
                    [f'{{"id": "chatcmpl-{run}", "created": {len(run)}, "choices": ["{answer}"]}}',
                     f"media/c/run-{run}-bf2c-4702-802a-f5c8e5985746/track00_face.mp4", latency, when])
        if extra_row:
            con.execute("INSERT INTO questions VALUES ('q3', 'C', '', ?, ?)", [version, when])
    folder = root / "benchmarks" / "hvbench"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"created_at": when, "counts": {"AR": 2}, "folder": str(folder)}))
    (folder / "Attitude_Recognition.jsonl").write_text(json.dumps({"Question_id": "q1", "Answer": answer}) + "\n")
    return fingerprint(root)


def test_times_paths_and_versions_do_not_count(tmp_path):
    a = _run(tmp_path / "a")
    b = _run(tmp_path / "elsewhere" / "b", when="2027-01-01 10:11:12", version="4", run="12177d0b", latency=0.5)
    assert differences(a, b) == ["code version of questions: ['3'] -> ['4']"]
    assert "file:benchmarks/hvbench/manifest.json" in a["entries"] and "hvbench.duckdb/table:questions" in a["entries"]


def test_a_changed_answer_or_a_new_row_is_named(tmp_path):
    a = _run(tmp_path / "a")
    assert differences(a, _run(tmp_path / "b", answer="C")) == [
        "changed: file:benchmarks/hvbench/Attitude_Recognition.jsonl", "changed: hvbench.duckdb/table:model_calls",
        "changed: hvbench.duckdb/table:questions"]
    assert differences(a, _run(tmp_path / "c", extra_row=True)) == ["changed: hvbench.duckdb/table:questions"]
