"""Consistency in the report: groups of items about one clip and person answered entirely right, and agreement of a
model's multiple-choice and yes/no answers, from scripted replies of the loopback server; figures counted by hand."""

from __future__ import annotations

import pytest

from hvbench_assets.cli import main
from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.benchmark.yesno import statements
from hvbench_assets.core.evaluation.reporting import report_for
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.bench_factory import item_of, make_benchmark, options_in, right_letter
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer

PERSON_1 = {"Emotion_Recognition", "Emotion_Temporal_Analysis", "Attitude_Recognition", "Emotion_Intensity_Compare"}
WOBBLY_WRONG = {"Emotion_Recognition_1", "Human_Count_2"}  # 4-option items


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """The toy benchmark (7 tasks x 3 items; item i of every task is about clip i): in each clip the four emotion
    tasks ask about person 1 and the other three about person 2, so 6 groups (4 + 3 items per clip)."""
    base = tmp_path_factory.mktemp("consistency")
    root = base / "toy"
    items = make_benchmark(root, with_audio=False)
    found = statements(load_benchmark(root))
    distractor = {s.source_question_id: s.option for s in found if s.truth == "no"}
    wh = Warehouse(base / "wh.duckdb")
    for it in items:
        wh.replace(QUESTIONS, {"video_id": f"clip{it.qid[-1]}", "task": it.task},
                   [{"question_id": it.qid, "video_id": f"clip{it.qid[-1]}", "task": it.task,
                     "target_track_ids": [1] if it.task in PERSON_1 else [2]}])

    def respond(req):
        if "Answer yes or no." in req.prompt:  # "good" is truthful; "wobbly" says yes to everything
            s = next(s for s in found if f"Question: {s.question}\n" in req.prompt)
            return ("Yes" if s.truth == "yes" else "No") if req.model == "good" else "Yes"
        item = item_of(req.prompt, items)
        if req.model == "wobbly" and item.qid in WOBBLY_WRONG:  # a wrong option that no statement names
            return next(letter for letter, _ in options_in(req.prompt)
                        if letter not in (item.answer, distractor[item.qid]))
        return right_letter(req.prompt, items)

    with FakeOpenAIServer(responder=respond) as server:
        (base / "models.toml").write_text("\n".join(f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{server.base_url}"\n'
                                                    for n in ("good", "wobbly")))
        for fmt in ("mc", "yesno"):
            assert main(["eval", "--benchmark", str(root), "--format", fmt, "--model", "good", "--model", "wobbly",
                         "--frames", "2", "--warehouse", str(wh.path), "--models-file", str(base / "models.toml"),
                         "--no-progress"]) == 0
    return wh


def test_groups_entirely_right_and_mc_yesno_agreement(evaluated):
    data, _ = report_for(evaluated, "toy", store=False)
    section = next(md for md, _ in data.sections if md.startswith("## Consistency"))
    # good: every item right, and its yes/no agrees with its picks on all 42 statements.
    # wobbly: wrong on ER_1 (group clip1/person 1) and HC_2 (clip2/person 2): 4 of 6 groups entirely right. It says
    # yes to every statement: that agrees with its pick on the true statements of the 19 items it got right and on
    # no distractor statement (it never picks one): 19 of 42.
    assert "| good | 100.0 (6/6) | 100.0 (42/42) |" in section
    assert "| wobbly | 66.7 (4/6) | 45.2 (19/42) |" in section
    assert data.scores["wobbly"]["Emotion_Recognition"].accuracy == pytest.approx(2 / 3)
