"""The 16 task families as the benchmark layout names them (file stems, acronyms, categories): read from the task
catalog, hvbench_assets/core/tasks/catalog.py, and re-exported here for the benchmark, scoring and evaluation."""

from __future__ import annotations

from hvbench_assets.core.tasks.catalog import (  # noqa: F401 (re-exports)
    AUDIO_TASKS,
    BEHAVIOR,
    CATEGORIES,
    EMOTION,
    PERSON,
    SPEECH,
    TASK_BY_ABBREV,
    TASK_BY_NAME,
    TASKS,
    task_info,
    tasks_of,
)
from hvbench_assets.core.tasks.catalog import Task as TaskInfo  # noqa: F401
