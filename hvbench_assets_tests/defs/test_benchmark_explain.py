"""`explain` on real questions: the ASD question of the duo clip (real_labels.DUO; offline labels L1-L10), and the
same question rebuilt after its L7 rows were made wrong; the output must lead to the bad L7 row."""

from __future__ import annotations

import json

import pytest

from hvbench_assets.cli import main as cli_main
from hvbench_assets.core.benchmark.explain import explain_question, format_explanation
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.defs.resources import WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.real_labels import DUO, duo_speaker_track, labelled

ASD = [a for a in TASK_ASSETS if a.key.to_user_string() == "active_speaker_detection"]


def _wh(root):
    return WarehouseResource(path=str(root / "wh.duckdb")).get()


@pytest.fixture(scope="module")
def duo(tmp_path_factory):
    root = labelled(tmp_path_factory, DUO, "duo")
    materialize(root, "duo", ASD)
    return root


def _answer_tracks(q):
    """The tracks drawn with the person number the answer names ("Person 1": the clip's number)."""
    return sorted(int(t) for t, x in q["marking"]["numbers"].items() if q["answer_text"] == f"Person {x}")


def _asd(root):
    return _wh(root).rows(QUESTIONS, video_id="duo", abbrev="ASD")[0]


def test_explain_names_the_clip_selection_and_the_l7_row_behind_the_answer(duo):
    q = _asd(duo)
    data = explain_question(_wh(duo), q["question_id"])
    json.dumps(data)  # JSON-able as promised to the question page
    assert data["found"] and data["question"]["abbrev"] == "ASD"
    assert data["source"]["clip"]["path"].endswith(DUO)
    assert data["selection"]["status"] == "selected" and data["selection"]["rule"] == "asd"
    front = duo_speaker_track(_wh(duo), "duo")
    basis = data["answer_basis"]
    speaker = _answer_tracks(q)  # every L1 track of the answer's person (L2 merges tracks)
    assert front in speaker and basis["tracks"] == speaker
    assert [(r["table"], r["track_id"]) for r in basis["label_rows"]] == [("speaker_scores", t) for t in speaker]
    assert any(r["current"]["speaking"] for r in basis["label_rows"])
    assert {lr["ref"]["table"] for lr in data["labels"]} >= {"human_tracks", "person_count", "audio_tags", "speaker_scores"}
    assert all(lr["changed_since_question"] is False for lr in data["labels"])
    assert "synthesis_steps" in data["tables_missing"] and data["evaluations"] is None
    text = format_explanation(data)
    assert f">> L7 speaker_scores track {front}: " in text and "speaking=true" in text
    assert "1. Source" in text and "9. Export and evaluations" in text
    # the evidence the export writes with the item: the answer person's span, one frame, boxes as frame fractions
    ev = data["evidence"]
    assert ev["span"] and ev["span_s"][0] < ev["span_s"][1] and ev["frame"]["index"] >= 0
    answer = [p for p in ev["people"] if p["answer"]]
    assert len(answer) == 1 and front in answer[0]["track_ids"] and all(0 <= v <= 1 for v in answer[0]["face"])
    assert f"evidence (as the next export writes it): span {ev['span']} " in text
    assert f"Person {answer[0]['person']} (track " in text and "<- answer: face [" in text


def test_explain_points_at_the_bad_l7_row_that_made_the_answer_wrong(tmp_path_factory, capsys):
    root = labelled(tmp_path_factory, DUO, "duo")
    wh = _wh(root)
    materialize(root, "duo", ASD)
    good = _asd(root)
    front = duo_speaker_track(wh, "duo")
    numbers = good["marking"]["numbers"]
    behind = next(int(t) for t, x in numbers.items() if x != numbers[str(front)])
    # one bad L7 row: the still woman's track "speaks", the real speaker does not (a broken speaker model)
    wh.execute("UPDATE speaker_scores SET speaking = (track_id = ?), raw_speaking = (track_id = ?), "
               "person_speaking = (track_id = ?) WHERE video_id = 'duo' AND track_id IS NOT NULL",
               [behind, behind, behind])
    wh.execute("UPDATE speaker_scores SET code_version = 'l7-broken', materialized_at = TIMESTAMP "
               "'2026-01-02 03:04:05' WHERE video_id = 'duo' AND track_id = ?", [behind])
    before = explain_question(wh, good["question_id"])  # the label changed under the question built from it
    changed = [lr["ref"]["track_id"] for lr in before["labels"] if lr["changed_since_question"]]
    assert changed == [behind] and "CHANGED since the question was built" in format_explanation(before)
    materialize(root, "duo", ASD)
    q = _asd(root)
    numbers = q["marking"]["numbers"]
    assert q["answer_text"] == f"Person {numbers[str(behind)]}" != f"Person {numbers[str(front)]}"  # now wrong
    data = explain_question(wh, q["question_id"])
    bad = [r for r in data["answer_basis"]["label_rows"] if r["current"]["speaking"]]
    assert [(r["table"], r["track_id"], r["code_version"]) for r in bad] == [("speaker_scores", behind, "l7-broken")]
    assert bad[0]["materialized_at"].startswith("2026-01-02 03:04:05")
    assert cli_main(["explain", q["question_id"], "--warehouse", str(root / "wh.duckdb")]) == 0
    out = capsys.readouterr().out
    line = next(i for i, s in enumerate(out.splitlines()) if s.startswith(f"  >> L7 speaker_scores track {behind}:"))
    assert "speaking=true" in out.splitlines()[line]
    assert "code_version=l7-broken materialized_at=2026-01-02 03:04:05" in out.splitlines()[line + 1]
    assert cli_main(["explain", q["question_id"], "--warehouse", str(root / "wh.duckdb"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer_basis"]["tracks"] == _answer_tracks(q)
    assert cli_main(["explain", "qnope", "--warehouse", str(root / "wh.duckdb")]) == 2


def test_explain_lists_synthesis_steps_in_order(duo):
    from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS

    wh, q = _wh(duo), _asd(duo)
    steps = [{"question_id": q["question_id"], "abbrev": "ASD", "seq": i, "step": step, "attempt": 1, "model": model,
              "weight": weight, "call_id": None, "cached": False, "status": "ok", "payload": payload}
             for i, (step, model, weight, payload) in enumerate([
                 ("answer", "m1", None, {"answer": "she talks"}), ("score", "m1", 2.0, {"scores": [9, 3]}),
                 ("total", None, None, {"winner": 0})])]
    wh.replace(SYNTHESIS_STEPS, {"video_id": "duo", "task": q["task"]}, list(reversed(steps)))
    data = explain_question(wh, q["question_id"])
    assert [s["step"] for s in data["synthesis_steps"]] == ["answer", "score", "total"]
    text = format_explanation(data)
    assert "  1. score: m1 weight 2: " in text and text.index("0. answer") < text.index("2. total")
