import numpy as np

from hvbench_assets.core.speakers.rules import (
    PersonClass,
    face_class,
    is_speaking,
    longest_positive_run,
    summarise,
    veto,
    voice_class,
)


def test_longest_positive_run():
    assert longest_positive_run([]) == (0, None)
    assert longest_positive_run([-1, 0, -2]) == (0, None)  # zero is not positive
    assert longest_positive_run([1, 1, -1, 1, 1, 1, 0, 1]) == (3, 3)


def test_speaking_needs_a_run_longer_than_min_run():
    assert not is_speaking([1.0] * 12 + [-1.0] + [1.0] * 12)
    assert is_speaking([1.0] * 13)
    assert is_speaking([1.0] * 6, min_run=5)
    s = summarise(np.array([-1] * 5 + [0.5] * 20, np.float32))
    assert s == {"longest_run": 20, "longest_run_start": 5, "raw_speaking": True, "positive_share": 0.8}


def test_veto_only_on_a_clear_disagreement():
    child_voice = PersonClass("child", 0.9)
    assert veto(child_voice, PersonClass("male", 0.95)) is not None
    assert veto(child_voice, PersonClass("child", 0.95)) is None
    assert veto(child_voice, PersonClass("male", 0.55)) is None  # face unsure
    assert veto(PersonClass("female", 0.6), PersonClass("male", 0.95)) is None  # voice unsure
    assert veto(child_voice, None) is None and veto(None, PersonClass("male", 1.0)) is None


def test_classes_from_label_rows():
    assert voice_class({"status": "ok", "voice_class": "female", "confidence": 0.8}) == PersonClass("female", 0.8)
    assert voice_class({"status": "no_speech", "voice_class": None}) is None
    # the L3 row as stored offline: unavailable -> the veto is skipped
    assert face_class({"status": "unavailable", "age": None, "gender": None}) is None
    # an offline row with a split vote or a model measured below the required accuracy: not used either
    assert face_class({"status": "low_confidence", "age": 30.0, "gender": "male", "gender_share": 1.0}) is None
    assert face_class({"status": "ok", "age": 41.0, "gender": "Man", "gender_share": 0.9}) == PersonClass("male", 0.9)
    assert face_class({"status": "ok", "age": 8.0, "gender": "Woman", "gender_share": 0.7}).label == "child"
    # the ensemble's calibrated agreement, where a row has one, is the confidence the veto reads
    assert face_class({"status": "ok", "age": 27.0, "gender": "male", "gender_share": 0.75,
                       "gender_confidence": 0.625}) == PersonClass("male", 0.625)
    assert face_class(None) is None
