"""The Dagster-free half of a task asset (defs/tasks/assets.py): where a clip's question media go, what the
question row stores as its video, the task assets a family reads before it runs (AST: BTA's action list), and the
task-wide counts the asset reports. The asset reads its inputs, calls these and run_family, and writes the rows.

BTA's action list is read from its synthesis_steps rows."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.render.questions import question_video_path
from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS
from hvbench_assets.core.tasks.families.behavior_temporal_analysis import action_list
from hvbench_assets.core.tasks.family import TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.warehouse import Warehouse


def question_dir(data_dir: str | Path, video_id: str) -> Path:
    """Where a clip's question videos and key frames go, shared by every task and the export:
    <data>/media/<clip>/questions (created)."""
    path = Path(data_dir) / "media" / video_id / "questions"
    path.mkdir(parents=True, exist_ok=True)
    return path


def key_frame_path(out_dir: Path, question_id: str) -> Path:
    return Path(out_dir) / f"{question_id}-key_frame.jpg"


def stored_video_path(out_dir: Path, labels: ClipLabels, marking: Mapping[str, Any]) -> str | None:
    """The question row's `video_path`: its question video relative to the data root (the clip for `none`)."""
    return to_stored(question_video_path(out_dir, labels.clip.path, labels.clip.sha256, marking))


def earlier_actions(wh: Warehouse, video_id: str, after: tuple[TaskFamily, ...]) -> tuple[str, ...]:
    """The action list of this clip's synthesis by the family this one reads first (AST: BTA's caption); () for a
    family that reads none, or when BTA found none."""
    for earlier in after:
        return action_list(wh.rows(SYNTHESIS_STEPS, order_by="seq", video_id=video_id, abbrev=earlier.abbrev))
    return ()


def task_counts(wh: Warehouse, task: str) -> tuple[dict[str, int], dict[str, int]]:
    """Across every clip of a task: verdicts by `status:rule`, and how often each letter is the answer."""
    verdicts = wh.query("SELECT status, rule, count(*) AS n FROM task_candidates WHERE task = ? GROUP BY ALL "
                        "ORDER BY n DESC", [task])
    letters = wh.query("SELECT answer, count(*) AS n FROM questions WHERE task = ? AND answer IS NOT NULL "
                       "GROUP BY ALL ORDER BY answer", [task])
    return {f"{r['status']}:{r['rule']}": r["n"] for r in verdicts}, {r["answer"]: r["n"] for r in letters}
