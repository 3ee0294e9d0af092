"""The 16 HumanVBench task families: file names (as published, typo included), abbreviations, categories."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskInfo:
    name: str  # file stem in the published layout, e.g. "Human_Count"
    abbrev: str  # the paper's acronym, e.g. "HC"
    category: str


EMOTION = "Emotion Perception"
PERSON = "Person Recognition"
BEHAVIOR = "Behavior Analysis"
SPEECH = "Speech-Visual Alignment"
CATEGORIES: tuple[str, ...] = (EMOTION, PERSON, BEHAVIOR, SPEECH)

TASKS: tuple[TaskInfo, ...] = (
    TaskInfo("Emotion_Recognition", "ER", EMOTION),
    TaskInfo("Emotion_Temporal_Analysis", "ETA", EMOTION),
    TaskInfo("Attitude_Recognition", "AR", EMOTION),
    TaskInfo("Emotion_Intensity_Compare", "EIC", EMOTION),
    TaskInfo("Text2Human", "T2H", PERSON),
    TaskInfo("Human2Text", "H2T", PERSON),
    TaskInfo("Human_Count", "HC", PERSON),
    TaskInfo("Appearance_Time_Detection", "ATD", PERSON),
    TaskInfo("Behavior_Temporal_Analysis", "BTA", BEHAVIOR),
    TaskInfo("Behavior_Causualty_Analysis", "BCA", BEHAVIOR),  # sic: the published file name
    TaskInfo("Action_at_Specified_Time", "AST", BEHAVIOR),
    TaskInfo("Time_of_Specific_Action", "TSA", BEHAVIOR),
    TaskInfo("Audio_Visual_Speaker_Matching", "AVSM", SPEECH),
    TaskInfo("Active_Speaker_Detection", "ASD", SPEECH),
    TaskInfo("Audio_Visual_Alignment_Detection", "AVAD", SPEECH),
    TaskInfo("Speech_Content_Matching", "SCM", SPEECH),
)

TASK_BY_NAME: dict[str, TaskInfo] = {t.name: t for t in TASKS}
TASK_BY_ABBREV: dict[str, TaskInfo] = {t.abbrev: t for t in TASKS}
# Tasks whose answer depends on the soundtrack: audio goes to models that accept it.
AUDIO_TASKS: frozenset[str] = frozenset(t.name for t in TASKS if t.category == SPEECH)


def task_info(name_or_abbrev: str) -> TaskInfo | None:
    """Look a task up by file stem or acronym (case-insensitive); None for a task outside the 16."""
    key = name_or_abbrev.strip()
    if key in TASK_BY_NAME:
        return TASK_BY_NAME[key]
    lowered = {k.lower(): v for k, v in {**TASK_BY_NAME, **TASK_BY_ABBREV}.items()}
    return lowered.get(key.lower())


def tasks_of(category: str) -> list[TaskInfo]:
    return [t for t in TASKS if t.category == category]
