"""Stable questions and balanced letters: question rows made through the real task code path (select, build,
question_row) on 40 hand-made ASD / AVAD clips; the letters are balanced only when the benchmark is assembled."""

from __future__ import annotations

import copy
import hashlib
import random
from collections import Counter

from hvbench_assets.core.benchmark.letters import assemble_letters, letter_counts
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.testkit.labels_factory import clip_labels, full


def _sha(i: int) -> str:
    return hashlib.sha256(f"clip-{i}".encode()).hexdigest()


def asd_labels(i: int, people: int):
    return clip_labels(duration_s=6.0, tracks=[full(k, 6.0, x=100.0 * (k + 1)) for k in range(people)],
                       speaking=(i % people,), sha=_sha(i))


def asd_rows(idx, people=lambda i: 2):
    rows = []
    for i in idx:
        q, marking = run_family(TASK_BY_ABBREV["ASD"], asd_labels(i, people(i))).question_row()
        rows.append({**q, "video_id": f"clip-{i}"})
    return rows


def avad_rows(idx):
    out = []
    for i in idx:
        labels = clip_labels(duration_s=10.0, tracks=[full(0, 10.0)], speaking=(0,), sha=_sha(1000 + i))
        out.append(run_family(TASK_BY_ABBREV["AVAD"], labels).question_row()[0])
    return out


def test_rerun_on_unchanged_inputs_leaves_every_question_row_identical():
    first = asd_rows(range(40))
    assert asd_rows(range(40)) == first
    # no dependence on the other clips: alone, in reverse order or among other clips, a row is the same
    alone = {r["question_id"]: r for r in asd_rows(reversed(range(40)))}
    assert all(alone[r["question_id"]] == r for r in first)
    assert asd_rows([7]) == [first[7]]
    # the stored slots are spread by the id's hash, not all on one letter
    assert len(Counter(r["answer"] for r in first)) >= 3


def test_assembled_letters_are_balanced_within_one_for_equal_option_counts():
    rows = asd_rows(range(40))  # 2 people + "more than one" + "nobody": 4 options each
    assert {len(r["options"]) for r in rows} == {4}
    before = copy.deepcopy(rows)
    out = assemble_letters(rows)
    assert rows == before  # the stored rows are not touched
    counts = Counter(a.answer for a in out.values())
    assert sum(counts.values()) == 40 and max(counts.values()) - min(counts.values()) <= 1
    assert set(counts) == set("ABCD")
    assert letter_counts(out, {r["question_id"]: r["task"] for r in rows}) == {
        "Active_Speaker_Detection": dict(sorted(counts.items()))}


def test_mixed_option_counts_stay_within_the_fair_share_plus_one():
    rows = asd_rows(range(40), people=lambda i: 2 + i % 3)  # 4, 5 or 6 options
    assert {len(r["options"]) for r in rows} == {4, 5, 6}
    out = assemble_letters(rows)
    counts = Counter(a.answer for a in out.values())
    fair = Counter()
    for r in rows:
        for o in r["options"]:
            fair[o["letter"]] += 1 / len(r["options"])
    for letter, share in fair.items():
        assert counts[letter] <= share + 1, (letter, counts[letter], share)


def test_assembly_is_deterministic_and_per_task():
    rows = asd_rows(range(40)) + avad_rows(range(12))
    out = assemble_letters(rows)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    again = assemble_letters(shuffled)
    assert {k: (v.answer, v.options) for k, v in out.items()} == {k: (v.answer, v.options) for k, v in again.items()}
    avad = Counter(out[r["question_id"]].answer for r in rows if r["abbrev"] == "AVAD")
    assert sum(avad.values()) == 12 and max(avad.values()) - min(avad.values()) <= 1  # 3 options: 4 each


def test_moved_answer_keeps_its_text_and_person_numbers_stay_on_their_boxes():
    """Option letters move, person numbers do not: "Person 2" still names the box drawn with 2 (the clip's
    person number), so the stored question video is exported as it is."""
    rows = asd_rows(range(40))
    out = assemble_letters(rows)
    moved = 0
    for r in rows:
        a = out[r["question_id"]]
        by_letter = {o["letter"]: o for o in r["options"]}
        assert [o["letter"] for o in a.options] == list("ABCD") and a.stored_answer == r["answer"]
        assert [by_letter[s]["origin"] for s in a.order] == [o["origin"] for o in a.options]
        assert [by_letter[s]["text"] for s in a.order] == [o["text"] for o in a.options]
        assert a.options["ABCD".index(a.answer)]["origin"] == "truth"
        # the distractors keep their stored relative order
        assert [s for s in a.order if s != r["answer"]] == [o["letter"] for o in r["options"] if o["letter"] != r["answer"]]
        speaker = next(t for t, n in r["marking"]["numbers"].items() if f"Person {n}" == r["answer_text"])
        assert a.options["ABCD".index(a.answer)]["text"] == f"Person {r['marking']['numbers'][speaker]}"
        moved += a.answer != r["answer"]
    assert moved > 0
