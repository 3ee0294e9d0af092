"""Tasks see only real people: tracks judged not human (or without a verdict) leave the labels before selection."""

from __future__ import annotations

from hvbench_assets.core.tasks.humans import noted, real_people
from hvbench_assets.core.tasks.families.human_counting import HcParams, select_hc
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.rules import persons
from hvbench_assets.testkit.labels_factory import clip_labels, full


def _verdicts(labels, humans: dict[int, bool | None]):
    labels.rows["human_verdicts"] = [
        {"video_id": "clip", "track_id": t, "status": "failed", "reason": "face crop clip unreadable: x.mp4"}
        if h is None else {"video_id": "clip", "track_id": t, "status": "ok", "is_human": h,
                           "score": 0.9 if h else 0.1, "method": "face-statistics logistic regression 1"}
        for t, h in humans.items()]
    return labels


def test_not_human_and_unjudged_tracks_leave_persons_and_the_count():
    labels = _verdicts(clip_labels(tracks=[full(0, x=50), full(1, x=200), full(2, x=350), full(3, x=500)],
                                   persons=[[0], [1, 2], [3]]), {0: True, 1: False, 2: False, 3: None})
    kept, skipped = real_people(labels)
    assert [t.track_id for t in kept.tracks] == [0] and set(skipped) == {1, 2, 3}
    assert "not a real person (score 0.10" in skipped[1] and "x.mp4" in skipped[3]
    assert kept.one("person_count")["person_count"] == 1 and kept.one("person_count")["persons"] == [[0]]
    assert [p.track_ids for p in persons(kept)] == [(0,)]
    assert len(labels.tracks) == 4  # the caller's labels are untouched


def test_clip_without_real_people_is_rejected_by_the_real_human_rule():
    labels = _verdicts(clip_labels(tracks=[full(0, x=50)]), {0: False})
    out = run_family(TASK_BY_ABBREV["AR"], labels)
    row = out.candidate_row()
    assert row["status"] == "rejected" and row["rule"] == "real_human" and "track 0: not a real person" in row["reason"]
    assert row["measured"]["not_real_people"] == {"0": "not a real person (score 0.10 by face-statistics logistic "
                                                          "regression 1)"}


def test_a_selected_verdict_names_the_skipped_tracks_and_labels_without_verdicts_stay():
    labels = _verdicts(clip_labels(tracks=[full(i, x=50 + 100 * i) for i in range(4)]),
                       {0: True, 1: True, 2: True, 3: False})
    kept, skipped = real_people(labels)
    v = noted(select_hc(kept, HcParams()), skipped, kept)
    assert v.selected and list(v.measured["not_real_people"]) == ["3"] and v.measured["people"] == 3
    plain = clip_labels(tracks=[full(0)])  # hand-made labels without human_verdicts: unchanged
    assert real_people(plain) == (plain, {})
