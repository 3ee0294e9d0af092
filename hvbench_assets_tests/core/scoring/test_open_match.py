"""The open-ended matcher on messy answers, per truth kind: right, wrong, or ungradable (never a guess)."""

from __future__ import annotations

import pytest

from hvbench_assets.core.scoring.open_match import (
    EMOTION_SYNONYMS,
    RIGHT,
    UNGRADABLE,
    WRONG,
    grade,
    parse_truth,
)
from hvbench_assets.core.synthesis.words import EMOTIONS
from hvbench_assets.core.tasks.families.attitude_recognition import ATTITUDES
from hvbench_assets.core.tasks.families.time_of_specific_action import ONGOING
from hvbench_assets.core.tasks.catalog import TASKS

CASES = [  # (kind, right option's text, reply, verdict)
    ("count", "3", "There are 3 people in the video.", RIGHT),
    ("count", "3", "I count THREE different people", RIGHT),
    ("count", "3", "**4**", WRONG),
    ("count", "3", "Maybe 3, maybe 4.", UNGRADABLE),
    ("count", "3", "I'm sorry, I cannot watch videos.", UNGRADABLE),
    ("count", "3", "From second 3, I think.", UNGRADABLE),  # a time, not a count (left to the judge)
    ("count", "3", "At 0:03", UNGRADABLE),
    ("time", "At 5 s", "At about 6 seconds.", RIGHT),  # within the 1 s tolerance
    ("time", "At 5 s", "0:08", WRONG),
    ("time", "At 5 s", "Between 4 and 5 s", RIGHT),
    ("time", "At 5 s", "between 4 and 9 s", UNGRADABLE),
    ("time", "At 5 s", "It is already going on when the clip starts.", WRONG),
    ("time", "From second 4", "Sound and picture match from second 4 on.", RIGHT),
    ("time", ONGOING, "The action is ongoing throughout.", RIGHT),
    ("time", ONGOING, "At 7 s", WRONG),
    ("time", ONGOING, "hard to say", UNGRADABLE),
    ("time_span", "From 3 s to 7 s", "The person appears from 3s to 8s.", RIGHT),
    ("time_span", "From 3 s to 7 s", "0:03 - 0:12", WRONG),
    ("time_span", "From 3 s to 7 s", "at 3 s", UNGRADABLE),
    ("person", "Person 2", "Person 2 is the one talking.", RIGHT),
    ("person", "Person 2", "The man in box number three.", WRONG),
    ("person", "Person 2", "#2", RIGHT),
    ("person", "Person 2", "Person 2 or 3", UNGRADABLE),
    ("person", "Person 2", "The woman on the left.", UNGRADABLE),
    ("person_emotion", "2-happy", "Person 2 looks the most joyful.", RIGHT),
    ("person_emotion", "2-happy", "3-happy", WRONG),
    ("person_emotion", "2-happy", "2-sad", WRONG),
    ("person_emotion", "2-happy", "Person 2", UNGRADABLE),
    ("emotion", "The person looks happy.", "She seems cheerful.", RIGHT),  # a synonym
    ("emotion", "The person looks happy.", "not happy, rather sad", WRONG),  # the negated word is dropped
    ("emotion", "The person looks happy and relaxed.", "happy", UNGRADABLE),  # part of the truth
    ("emotion", "The person looks happy.", "I can't see a face.", UNGRADABLE),
    ("emotion_sequence", "calm, then surprised, then happy", "Relaxed at first, then astonished, finally joyful.", RIGHT),
    ("emotion_sequence", "calm, then surprised, then happy", "happy, then surprised, then calm", WRONG),  # order
    ("emotion_sequence", "calm, then surprised, then happy", "calm then happy", WRONG),
    ("attitude", "Positive", "The attitude is positive.", RIGHT),
    ("attitude", "Neutral", "Neither positive nor negative.", RIGHT),
    ("attitude", "Negative", "It is not negative, it is positive", WRONG),
    ("attitude", "Indeterminate", "It cannot be determined from the clip.", RIGHT),
    ("attitude", "Positive", "positive or negative, hard to say", UNGRADABLE),
]


@pytest.mark.parametrize("kind,truth_text,reply,verdict", CASES)
def test_messy_answers_per_truth_kind(kind, truth_text, reply, verdict):
    truth = parse_truth(kind, truth_text)
    assert truth is not None
    assert grade(kind, truth, reply).verdict == verdict


def test_truths_read_from_the_forms_the_task_rules_write():
    assert parse_truth("time_span", "From 3 s to 7 s") == [3, 7]
    assert parse_truth("time", "At 12 s") == 12 and parse_truth("time", ONGOING) == "ongoing"
    assert parse_truth("time", "From second 4") == 4
    assert parse_truth("person_emotion", "2-happy") == [2, "happy"]
    assert [parse_truth("attitude", a) for a in ATTITUDES] == ["positive", "negative", "neutral", "indeterminate"]
    # not in the kind's form: no structured truth, the item is graded as text (by the judge)
    assert parse_truth("person", "There is no active speaker in the video.") is None
    assert parse_truth("count", "about three") is None
    assert grade("text", None, "The person is tall.").verdict == UNGRADABLE


def test_every_synonym_group_speaks_the_emotion_taxonomy_and_every_kind_has_a_grader():
    assert all(head in EMOTIONS for head in EMOTION_SYNONYMS)
    assert {w for group in EMOTION_SYNONYMS.values() for w in group} - {"shocked"} <= EMOTIONS
    assert {t.answer_kind for t in TASKS} == {"count", "time", "time_span", "person", "person_emotion", "emotion",
                                              "emotion_sequence", "attitude", "text"}
