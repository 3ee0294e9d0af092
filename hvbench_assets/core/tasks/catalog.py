"""The task catalog: the 16 HumanVBench task families, in the paper's order. Each is one object (family.py
`TaskFamily`) defined in its own module under core/tasks/families/, which holds everything about it: selection
rule, builder, question, answer form and option checks, truth, pool strata, annotation and review guideline.

Everything else reads this tuple and the lookups below: the task assets, the synthesis chain (through a family's
recipe), the pool, curation, the review app, the export, scoring and the docs' task table. A new family is one
new module there plus its line here (docs/tasks.md, "Adding a family"); hvbench_assets_tests/test_task_catalog.py
fails when another module keeps its own per-task table or branches on a family's name.
"""

from __future__ import annotations

from hvbench_assets.core.tasks.families import (
    action_at_specified_time,
    active_speaker_detection,
    appearance_time_detection,
    attitude_recognition,
    audio_visual_alignment_detection,
    audio_visual_speaker_matching,
    behavior_causality_analysis,
    behavior_temporal_analysis,
    emotion_intensity_comparison,
    emotion_recognition,
    emotion_temporal_analysis,
    human_counting,
    human_to_text,
    speech_content_matching,
    text_to_human,
    time_of_specific_action,
)
from hvbench_assets.core.tasks.family import SPEECH, TaskFamily

TASKS: tuple[TaskFamily, ...] = (
    emotion_recognition.FAMILY,
    emotion_temporal_analysis.FAMILY,
    attitude_recognition.FAMILY,
    emotion_intensity_comparison.FAMILY,
    text_to_human.FAMILY,
    human_to_text.FAMILY,
    human_counting.FAMILY,
    appearance_time_detection.FAMILY,
    behavior_temporal_analysis.FAMILY,
    behavior_causality_analysis.FAMILY,
    action_at_specified_time.FAMILY,
    time_of_specific_action.FAMILY,
    audio_visual_speaker_matching.FAMILY,
    active_speaker_detection.FAMILY,
    audio_visual_alignment_detection.FAMILY,
    speech_content_matching.FAMILY,
)

TASK_BY_NAME: dict[str, TaskFamily] = {t.name: t for t in TASKS}
TASK_BY_ABBREV: dict[str, TaskFamily] = {t.abbrev: t for t in TASKS}
TASK_BY_ASSET: dict[str, TaskFamily] = {t.asset: t for t in TASKS}
# Tasks whose answer depends on the soundtrack: audio goes to models that accept it.
AUDIO_TASKS: frozenset[str] = frozenset(t.name for t in TASKS if t.category == SPEECH)
# Not reviewed unless HVBENCH_REVIEW_EXCLUDE says otherwise: reliable by construction.
NOT_REVIEWED: tuple[str, ...] = tuple(t.abbrev for t in TASKS if not t.reviewed)
# abbrev -> what a human annotates (count | action) for the families whose truth is a human's
ANNOTATED: dict[str, str] = {t.abbrev: t.annotation.kind for t in TASKS if t.annotation}


def task_info(name_or_abbrev: str) -> TaskFamily | None:
    """Look a task up by file stem or acronym (case-insensitive); None for a task outside the 16."""
    key = name_or_abbrev.strip()
    if key in TASK_BY_NAME:
        return TASK_BY_NAME[key]
    lowered = {k.lower(): v for k, v in {**TASK_BY_NAME, **TASK_BY_ABBREV}.items()}
    return lowered.get(key.lower())


def tasks_of(category: str) -> list[TaskFamily]:
    return [t for t in TASKS if t.category == category]
