"""Selection rules and option builders of the closed-ended families on hand-made label rows, every
boundary included (exactly 4 s, exactly 2 and 4 people, presence exactly 1/3, ...)."""

from __future__ import annotations

import random

import pytest

from hvbench_assets.core.tasks.families import active_speaker_detection as asd
from hvbench_assets.core.tasks.families import appearance_time_detection as atd
from hvbench_assets.core.tasks.families import audio_visual_alignment_detection as avad
from hvbench_assets.core.tasks.families import audio_visual_speaker_matching as avsm
from hvbench_assets.core.tasks.families import human_counting as hc
from hvbench_assets.core.tasks.families import speech_content_matching as scm
from hvbench_assets.core.tasks.families import time_of_specific_action as tsa
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS
from hvbench_assets.core.tasks.rules import Option, assemble, integer_range, named_number, overlap, persons
from hvbench_assets.core.tasks.store import question_id
from hvbench_assets.core.vision.tables import number_tracks, person_number
from hvbench_assets.testkit.labels_factory import clip_labels, full, track


def men(n: int) -> dict[int, dict]:
    """L3 rows of n confident men: with a male voice, ASD's speaker is confirmed."""
    return {i: {"status": "ok", "age": 35, "gender": "Man", "gender_share": 1.0} for i in range(n)}


def two_speakers_clip(duration_s=4.0, n=2, speaking=(0,), voice="male", faces=None, **kw):
    return clip_labels(duration_s=duration_s, tracks=[full(i, duration_s, x=100.0 * (i + 1)) for i in range(n)],
                       speaking=speaking, voice=voice, faces=men(n) if faces is None else faces, **kw)


# -- ASD ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("duration,ok", [(3.99, False), (4.0, True)])
def test_asd_duration_boundary(duration, ok):
    v = asd.select_asd(two_speakers_clip(duration_s=duration), asd.AsdParams())
    assert v.selected is ok
    if not ok:
        assert v.rule == "duration" and v.reason == "duration=3.99s < 4s"


@pytest.mark.parametrize("n,ok", [(1, False), (2, True), (4, True), (5, False)])
def test_asd_people_boundaries(n, ok):
    v = asd.select_asd(two_speakers_clip(duration_s=6, n=n), asd.AsdParams())
    assert v.selected is ok
    if not ok:
        assert v.reason.startswith(f"people={n} ") and v.rule == "people"
    if n == 5:
        assert v.reason == "people=5 not in 2..4"


def test_asd_needs_exactly_one_speaking_person_and_counts_merged_tracks_once():
    tracks = [track(0, 0, 49, x=10), track(1, 50, 99, x=12), track(2, 0, 99, x=300)]
    one_person_two_tracks = clip_labels(duration_s=4, tracks=tracks, persons=[[0, 1], [2]], speaking=(0, 1),
                                        voice="male", faces=men(3))
    v = asd.select_asd(one_person_two_tracks, asd.AsdParams())
    assert v.selected and set(v.target_track_ids) == {0, 1}
    two = clip_labels(duration_s=4, tracks=tracks, persons=[[0, 1], [2]], speaking=(0, 2))
    assert asd.select_asd(two, asd.AsdParams()).reason == \
        "speaking persons=2 (L7), need exactly 1: more than one person talks"
    none = clip_labels(duration_s=4, tracks=tracks, persons=[[0, 1], [2]], speaking=())
    assert "speaking persons=0" in asd.select_asd(none, asd.AsdParams()).reason


def test_asd_asks_only_where_the_voice_confirms_the_speakers_face():
    faces = {0: {"status": "ok", "age": 30, "gender": "Woman", "gender_share": 0.95},
             1: {"status": "ok", "age": 40, "gender": "Man", "gender_share": 0.95}}
    agree = two_speakers_clip(duration_s=6, speaking=(1,), voice="male", faces=faces)
    assert asd.select_asd(agree, asd.AsdParams()).selected
    clash = two_speakers_clip(duration_s=6, speaking=(0,), voice="male", faces=faces)
    v = asd.select_asd(clash, asd.AsdParams())
    assert v.rule == "voice_face" and "the voice is male (0.90) but the face is female (0.95)" in v.reason
    unsure = {**faces, 1: {**faces[1], "status": "low_confidence"}}  # an unsure face confirms nothing
    v = asd.select_asd(two_speakers_clip(duration_s=6, speaking=(1,), voice="male", faces=unsure), asd.AsdParams())
    assert v.rule == "voice_face" and "face's class is unknown (L3 low_confidence)" in v.reason
    no_voice = two_speakers_clip(duration_s=6, speaking=(1,), faces=faces, voice=None)
    assert "the voice's class is unknown" in asd.select_asd(no_voice, asd.AsdParams()).reason


def test_asd_names_the_veto_and_faces_too_small_to_judge():
    labels = two_speakers_clip(duration_s=6, speaking=())
    labels.rows["speaker_scores"][0].update(raw_speaking=True, veto_reason="voice is male (0.90) but the face is female (0.95)")
    v = asd.select_asd(labels, asd.AsdParams())
    assert v.rule == "voice_face" and "track 0: voice is male" in v.reason
    small = two_speakers_clip(duration_s=6, speaking=(0,))
    small.rows["speaker_scores"][1].update(status="too_small", reason="face 30 px (median side) < 40 px: too small")
    v = asd.select_asd(small, asd.AsdParams())
    assert v.rule == "face_size" and "30 px" in v.reason


def test_asd_rejects_no_speech_and_music():
    assert asd.select_asd(two_speakers_clip(speech=False), asd.AsdParams()).rule == "speech"
    assert "music" in asd.select_asd(two_speakers_clip(music=True), asd.AsdParams()).reason


def test_asd_options_numbers_and_truth():
    labels = two_speakers_clip(duration_s=5, n=3, speaking=(2,))
    out = run_family(TASK_BY_ABBREV["ASD"], labels)
    q, marking = out.question_row()
    texts = [o["text"] for o in q["options"]]
    assert len(texts) == 5 and asd.MORE_THAN_ONE in texts and asd.NO_SPEAKER in texts
    # each box carries the clip's person number (left to right: track 0 is 1), the same as on the human_tracks
    # key frame; a person option names that number, whichever option letter it sits at
    assert marking == {"kind": "numbers", "numbers": {"0": 1, "1": 2, "2": 3}}
    assert q["answer_text"] == "Person 3"
    assert sorted(t for t in texts if t.startswith("Person ")) == ["Person 1", "Person 2", "Person 3"]


def test_a_person_of_two_tracks_is_named_by_its_first_number_and_a_subset_keeps_clip_numbers():
    """Tracks 0 and 1 are one person (L2), left to right 0, 1, 2, 3 are 1, 2, 3, 4; track 3 is no real
    person: the question boxes 1 (on both of its tracks) and 3, never renumbers 3 to 2."""
    tracks = [track(0, 0, 49, x=10), track(1, 50, 99, x=12), track(2, 0, 99, x=300), track(3, 0, 99, x=500)]
    labels = clip_labels(duration_s=4, tracks=tracks, persons=[[0, 1], [2], [3]], speaking=(2,), voice="male",
                         faces=men(4))
    labels.rows["human_verdicts"] = [{"video_id": "clip", "track_id": t, "status": "ok", "is_human": t != 3,
                                      "score": 0.9 if t != 3 else 0.1, "method": "m"} for t in range(4)]
    assert number_tracks(tracks) == {0: 1, 1: 2, 2: 3, 3: 4}
    q, marking = run_family(TASK_BY_ABBREV["ASD"], labels).question_row()
    assert marking["numbers"] == {"0": 1, "1": 1, "2": 3} and q["answer_text"] == "Person 3"
    assert sorted(o["text"] for o in q["options"] if o["text"].startswith("Person ")) == ["Person 1", "Person 3"]
    assert person_number((1, 0), number_tracks(tracks)) == 1


# -- AVAD -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("duration,ok", [(8.0, False), (8.04, True)])
def test_avad_duration_is_strict(duration, ok):
    labels = clip_labels(duration_s=duration, tracks=[full(0, duration)], speaking=(0,))
    assert avad.select_avad(labels, avad.AvadParams()).selected is ok


def test_avad_people_and_speaker():
    three = clip_labels(duration_s=9, tracks=[full(i, 9, x=100 * i) for i in range(3)], speaking=(0,))
    assert avad.select_avad(three, avad.AvadParams()).reason == "people=3 > 2"
    silent = clip_labels(duration_s=9, tracks=[full(0, 9)], speaking=())
    assert avad.select_avad(silent, avad.AvadParams()).rule == "speaker"


def test_avad_options_are_segment_starts_and_the_cut_is_seeded():
    assert avad.segment_starts(9.0) == [0, 3, 6] and avad.segment_starts(10.0) == [0, 3, 7]
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], speaking=(0,))
    a = run_family(TASK_BY_ABBREV["AVAD"], labels).question_row()
    b = run_family(TASK_BY_ABBREV["AVAD"], labels).question_row()
    assert a == b  # seeded from the question id
    q, marking = a
    assert sorted(o["text"] for o in q["options"]) == ["From second 0", "From second 3", "From second 7"]
    assert q["answer_text"] == f"From second {marking['cut_s']}"


# -- AVSM -----------------------------------------------------------------------------------------
def test_avsm_voice_matches_exactly_one_face_class():
    faces = {0: {"status": "ok", "age": 30, "gender": "Woman", "gender_share": 0.9},
             1: {"status": "ok", "age": 40, "gender": "Man", "gender_share": 0.9}}
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), full(1, 5, x=300)], voice="male", faces=faces, speaking=(1,))
    v = avsm.select_avsm(labels, avsm.AvsmParams())
    assert v.selected and v.target_track_ids == (1,)
    both_men = {k: {**f, "gender": "Man"} for k, f in faces.items()}
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), full(1, 5, x=300)], voice="male", faces=both_men)
    assert avsm.select_avsm(labels, avsm.AvsmParams()).reason == "persons whose face class is male=2, need exactly 1"
    child = {0: {"status": "ok", "age": 7, "gender": "Woman"}, 1: faces[1]}
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), full(1, 5, x=300)], voice="child", faces=child, speaking=(0,))
    assert avsm.select_avsm(labels, avsm.AvsmParams()).target_track_ids == (0,)


def test_avsm_an_unsure_face_leaning_away_from_the_voice_does_not_block():
    faces = {0: {"status": "ok", "age": 30, "gender": "Woman", "gender_share": 0.9},
             1: {"status": "low_confidence", "age": 40, "gender": "male", "gender_share": 0.62}}
    tracks = [full(0, 5), full(1, 5, x=300)]
    v = avsm.select_avsm(clip_labels(duration_s=5, tracks=tracks, voice="female", faces=faces, speaking=(0,)),
                           avsm.AvsmParams())
    assert v.selected and v.target_track_ids == (0,) and v.measured["unsure_faces"] == {"1": "male"}
    leaning_to_voice = {**faces, 1: {**faces[1], "gender": "female"}}
    v = avsm.select_avsm(clip_labels(duration_s=5, tracks=tracks, voice="female", faces=leaning_to_voice, speaking=(0,)),
                           avsm.AvsmParams())
    assert v.rule == "face_class"
    # the unsure face may not be the one L7 hears: then the match is unconfirmed
    v = avsm.select_avsm(clip_labels(duration_s=5, tracks=tracks, voice="female", faces=faces, speaking=(1,)),
                           avsm.AvsmParams())
    assert v.rule == "speaker_agrees"


def test_avsm_asks_only_where_l7_hears_the_matched_person():
    """A voice from off screen (nobody visibly speaks) or another visible speaker: the match would be a guess."""
    faces = {0: {"status": "ok", "age": 30, "gender": "Woman", "gender_share": 0.9},
             1: {"status": "ok", "age": 40, "gender": "Man", "gender_share": 0.9}}
    tracks = [full(0, 5), full(1, 5, x=300)]
    off_screen = avsm.select_avsm(clip_labels(duration_s=5, tracks=tracks, voice="female", faces=faces), avsm.AvsmParams())
    assert off_screen.rule == "visible_speaker" and "off screen" in off_screen.reason
    other = avsm.select_avsm(clip_labels(duration_s=5, tracks=tracks, voice="female", faces=faces, speaking=(1,)),
                               avsm.AvsmParams())
    assert other.rule == "speaker_agrees" and "matches tracks [0], but L7's speakers are [[1]]" in other.reason


def test_avsm_offline_l3_is_a_clear_rejection_and_coverage_is_strict():
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), full(1, 5, x=300)], voice="male")
    assert avsm.select_avsm(labels, avsm.AvsmParams()).reason == "face class unknown for 2 person(s) (L3 unavailable)"
    unsure = {t: {"status": "low_confidence", "age": 30, "gender": "male", "gender_share": 1.0} for t in (0, 1)}
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), full(1, 5, x=300)], voice="male", faces=unsure)
    assert avsm.select_avsm(labels, avsm.AvsmParams()).reason == "face class unknown for 2 person(s) (L3 low_confidence)"
    # 67 % exactly is not more than 67 %
    short = track(1, 0, int(0.67 * 125) - 1, x=300)
    labels = clip_labels(duration_s=5, tracks=[full(0, 5), short], voice="male")
    assert avsm.select_avsm(labels, avsm.AvsmParams()).rule == "coverage"


# -- HC -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,stratum", [(2, None), (3, "3-5"), (5, "3-5"), (6, "6-8"), (8, "6-8"), (9, "9+")])
def test_hc_strata(n, stratum):
    labels = clip_labels(tracks=[full(i, x=50 * i) for i in range(n)])
    v = hc.select_hc(labels, hc.HcParams())
    assert v.selected is (stratum is not None)
    if stratum:
        assert v.measured["stratum"] == stratum
    else:
        assert v.reason == "people=2 < 3"


@pytest.mark.parametrize("truth", [1, 2, 3, 7, 12])
def test_hc_distractors_within_four_and_never_below_one(truth):
    for seed in range(30):
        d = hc.count_distractors(truth, 4, random.Random(seed))
        assert len(set(d)) == 3 and truth not in d
        assert all(1 <= k and abs(k - truth) <= 4 for k in d)


def test_hc_waits_for_a_human_count_then_builds():
    labels = clip_labels(tracks=[full(i, x=50 * i) for i in range(4)])
    fam = TASK_BY_ABBREV["HC"]
    waiting = run_family(fam, labels, annotation=lambda tids: None)
    assert waiting.status == "awaiting_annotation"
    row, marking = waiting.question_row()
    assert row["status"] == "awaiting_annotation" and row["options"] == [] and marking is None
    ann = {"annotation_id": "a1", "value": {"count": 5}}
    q, marking = run_family(fam, labels, annotation=lambda tids: ann).question_row()
    assert q["answer_text"] == "5" and q["annotation_ids"] == ["a1"] and marking == {"kind": "none"}
    assert q["rule_params"]["build"]["l2_estimate"] == 4


# -- ATD ------------------------------------------------------------------------------------------
def test_atd_presence_boundaries():
    fps, dur = 25.0, 9.0
    frames = int(dur * fps)  # 225
    third = track(0, 0, frames // 3 - 1)  # exactly 1/3
    v = atd.select_atd(clip_labels(duration_s=dur, tracks=[third]), atd.AtdParams())
    assert v.selected and v.target_track_ids == (0,)
    too_short = track(0, 0, frames // 3 - 2)
    assert atd.select_atd(clip_labels(duration_s=dur, tracks=[too_short]), atd.AtdParams()).rule == "presence"
    assert atd.select_atd(clip_labels(duration_s=7.0, tracks=[track(0, 0, 80)]), atd.AtdParams()).reason \
        == "duration=7s <= 7s"


def test_atd_distractor_ranges_overlap_at_most_four_seconds():
    truth = integer_range(2.04, 8.6)
    assert truth == (2, 9)
    for seed in range(20):
        ranges = atd.distractor_ranges(truth, 20.0, 4.0, random.Random(seed))
        assert len(set(ranges)) == 3 and truth not in ranges
        assert all(overlap(r, truth) <= 4 and 0 <= r[0] < r[1] <= 20 for r in ranges)


# -- SCM / TSA --------------------------------------------------------------------------------------
def test_scm_rules():
    base = dict(tracks=[full(0, 6)], speaking=(0,))
    assert scm.select_scm(clip_labels(duration_s=6, **base), scm.ScmParams()).selected
    assert scm.select_scm(clip_labels(duration_s=5, tracks=[full(0, 5)], speaking=(0,)),
                                     scm.ScmParams()).reason == "duration=5s <= 5s"
    text35 = "x" * 35
    row = {"video_id": "clip", "status": "ok", "language": "en", "text": text35}
    assert scm.select_scm(clip_labels(duration_s=6, transcript=row, **base),
                                     scm.ScmParams()).reason == "chars=35 <= 35"
    unsure = {"video_id": "clip", "status": "low_confidence", "language": "unknown", "text": "ni hao " * 10}
    assert scm.select_scm(clip_labels(duration_s=6, transcript=unsure, **base),
                                     scm.ScmParams()).rule == "english"
    two = clip_labels(duration_s=6, tracks=[full(0, 6), full(1, 6, x=300)], speaking=(0,))
    assert scm.select_scm(two, scm.ScmParams()).reason == "people=2 not in 1..1"


def test_scm_sentence_checks():
    truth = "the weather is lovely today in the park"
    kept, problems = scm.check_sentences(truth, [
        "The weather is lovely today in the park!",  # same words
        "the sky is bright this morning by the lake",
        "rain is expected later in the city centre",
        "ok",  # too short
        "the sky is bright this morning by the lake",  # duplicate
    ], 0.3)
    assert kept == ["the sky is bright this morning by the lake", "rain is expected later in the city centre"]
    assert len(problems) == 3


def test_tsa_distractors_and_ongoing():
    for seed in range(20):
        d = tsa.time_distractors(5, 12.0, 3, random.Random(seed))
        assert all(abs(s - 5) >= 3 and 0 <= s <= 12 for s in d) and len(set(d)) == 3
    labels = clip_labels(duration_s=12, tracks=[full(0, 12)])
    fam = TASK_BY_ABBREV["TSA"]
    ongoing = {"annotation_id": "a", "value": {"ongoing": True, "action": "talking"}}
    q, _ = run_family(fam, labels, annotation=lambda t: ongoing).question_row()
    assert q["answer_text"] == tsa.ONGOING
    assert sorted(o["text"] for o in q["options"] if o["origin"] == "fixed") == ["At 1 s", "At 10 s", "At 4 s", "At 7 s"]
    short = {"annotation_id": "b", "value": {"action": "begins to wave", "start_s": 6}}
    q, marking = run_family(fam, labels, annotation=lambda t: short).question_row()
    assert q["answer_text"] == "At 6 s" and tsa.ONGOING in [o["text"] for o in q["options"]]
    assert marking == {"kind": "red_box", "track_ids": [0]} and len(q["options"]) == 5


# -- shared --------------------------------------------------------------------------------------------
def test_persons_follow_l2_groups_left_to_right():
    tracks = [track(0, 0, 10, x=400), track(1, 0, 10, x=50), track(2, 20, 30, x=410)]
    ps = persons(clip_labels(tracks=tracks, persons=[[0, 2], [1]]))
    assert [p.track_ids for p in ps] == [(1,), (0, 2)] and ps[1].frames == 22


def test_assemble_places_truth_and_names_persons_by_their_clip_number():
    opts = assemble(Option("", "truth", person=1), [Option("", "rule", person=0), Option("x", "fixed")], 2,
                    random.Random(1), {0: 2, 1: 4})
    assert opts[2] == {"letter": "C", "text": "Person 4", "origin": "truth"}
    assert sorted(o["text"] for o in opts) == ["Person 2", "Person 4", "x"]


def test_named_number_reads_person_options_only():
    texts = ("Person 2", "2-happy", "Person 12", "Person B", "B-happy", "2 people talk", asd.NO_SPEAKER, None)
    assert [named_number(t) for t in texts] == [2, 2, 12, None, None, None, None, None]


def test_question_id_is_stable_and_changes_with_inputs():
    a = question_id("Active_Speaker_Detection", "sha1", [0], "1-x")
    assert a == question_id("Active_Speaker_Detection", "sha1", [0], "1-x")
    assert a != question_id("Active_Speaker_Detection", "sha2", [0], "1-x")
    assert a != question_id("Active_Speaker_Detection", "sha1", [0], "2-x")


def test_registry_is_table_9():
    table9 = {"human_tracks": "ER ETA AR EIC T2H H2T HC ATD BTA BCA AST TSA AVSM ASD",
              "person_count": "T2H H2T HC AVSM ASD AVAD SCM", "demographics": "AVSM",
              "appearance": "ER ETA AR T2H H2T ATD BTA BCA", "facial_description": "ER ETA",
              "audio_tags": "AVSM ASD AVAD SCM", "speaker_scores": "ASD AVAD", "transcript": "SCM",
              "voice_demographics": "AVSM"}
    paper = [f for f in TASKS if f.from_paper]
    assert len(paper) == 16 and len({f.asset for f in TASKS}) == len(TASKS)
    for label, tasks in table9.items():
        assert {f.abbrev for f in paper if label in f.labels} == set(tasks.split())
    for f in TASKS:
        assert not set(f.ours) & set(f.labels) and (not f.ours or f.why_ours)


def test_ask_failure_becomes_failed_candidate():
    class Garbage:
        text, call_id, error, ok = "no json here", "c1", None, True

    labels = clip_labels(duration_s=6, tracks=[full(0, 6)], speaking=(0,))
    out = run_family(TASK_BY_ABBREV["SCM"], labels, ask=lambda *a, **k: Garbage())
    assert out.status == "failed" and "no JSON object" in out.candidate_row()["reason"]
    assert out.question_row() == (None, None)
    assert isinstance(out.result, Pending) and out.result.call_ids == ["c1"]
    assert not isinstance(out.result, (Draft, BuildContext))


def test_documented_task_table_is_the_registry():
    from pathlib import Path

    from hvbench_assets.core.tasks.describe import task_table_markdown

    doc = (Path(__file__).resolve().parents[3] / "docs" / "tasks.md").read_text()
    assert task_table_markdown() in doc, \
        "docs/tasks.md's task table is out of date: paste `python -m hvbench_assets.core.tasks.describe` into it"


def test_content_hash_changes_with_what_a_reviewer_saw_not_with_json_encoding():
    from hvbench_assets.core.tasks.store import question_content_hash

    row = {"question": "Who speaks?", "options": '[{"letter": "A", "text": "left"}]', "answer": "A",
           "answer_text": "left", "marking": '{"kind": "numbers"}', "clip_sha256": "ab", "status": "draft"}
    same = dict(row, options=[{"letter": "A", "text": "left"}], marking={"kind": "numbers"}, status="accepted")
    assert question_content_hash(row) == question_content_hash(same)
    assert question_content_hash(row) != question_content_hash(dict(row, answer="B"))
    assert question_content_hash(row) != question_content_hash(dict(row, question="Who talks?"))


def test_verdict_lines_share_a_line_per_clip_status_and_reason():
    from hvbench_assets.core.tasks.describe import verdict_lines

    blocked = "needs a model: set HVBENCH_DESCRIBER_MODEL"
    cands = [{"video_id": "a", "abbrev": "AR", "status": "blocked", "reason": blocked},
             {"video_id": "a", "abbrev": "ASD", "status": "selected", "reason": "one speaker"},
             {"video_id": "a", "abbrev": "ATD", "status": "blocked", "reason": blocked},
             {"video_id": "b", "abbrev": "AR", "status": "blocked", "reason": blocked}]
    lines = verdict_lines(cands)
    assert len(lines) == 3 and "AR,ATD" in lines[0] and lines[0].count(blocked) == 1
    assert lines[1].split()[:3] == ["a", "selected", "ASD"] and lines[2].startswith("b ")
