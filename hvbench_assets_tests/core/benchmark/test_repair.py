"""Repair rounds of the leakage step against a real OpenAI-compatible HTTP server: a blind model that picks the
longest option (a real text-only shortcut), a writer that edits the wrong options when told what the blind
model chose."""

from __future__ import annotations

import json
import re

import pytest

from hvbench_assets.core.benchmark.leakage import answer_blind, blind_jobs, leakage_verdicts
from hvbench_assets.core.benchmark.repair import blind_feedback, repair_counts, repair_leaky
from hvbench_assets.core.mllm import MllmClient, RetryPolicy, parse_registry
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer

TRUTH = "The person is a tall man in a long red coat standing beside the open door"


def row(qid, abbrev, task, options, answer="A", origin="perturbation"):
    return {"question_id": qid, "abbrev": abbrev, "task": task, "answer": answer,
            "question": f"[{qid}] Describe the person marked by the red box.",
            "options": [{"letter": letter, "text": t, "origin": "truth" if letter == answer else origin}
                        for letter, t in zip("ABCD", options)]}


POOLED = [
    row("q_fixed", "H2T", "Human2Text", [TRUTH, "The person is a child", "The person is a dog owner", "The person is old"]),
    row("q_stubborn", "H2T", "Human2Text", [TRUTH, "The person is a child", "The person is a cook", "The person is shy"]),
    row("q_count", "HC", "Human_Count", ["seven people standing in a long row", "two", "three", "four"], origin="rule"),
]
REPAIRED = ["The person is a short woman in a long blue coat standing beside the closed window",
            "The person is a tall man in a short green coat sitting beside the open window now",
            "The person is a young boy in a long red scarf running beside the open gate there"]
STILL_SHORT = ["The person is a short woman in a blue coat", "The person is a tall man in a green hat",
               "The person is a young boy in a red scarf"]


def responder(req):
    if req.model == "writer":
        if "could NOT see the video" not in req.prompt:
            return "no feedback given"
        distractors = REPAIRED if "[q_fixed]" in req.prompt else STILL_SHORT
        return json.dumps({"distractors": distractors})
    options = re.findall(r"^Option ([A-Z]): (.+)$", req.prompt, flags=re.MULTILINE)
    return max(options, key=lambda o: len(o[1]))[0]  # the blind model's shortcut: the longest option


@pytest.fixture
def client():
    with FakeOpenAIServer(responder=responder) as server:
        reg = parse_registry({"models": {n: {"model_id": n, "base_url": server.base_url} for n in ("blind", "writer")}},
                             environ={})
        yield MllmClient(reg, None, retry=RetryPolicy(max_attempts=1, base_s=0.01)), server


def test_blind_answered_questions_are_repaired_retested_or_removed_after_the_rounds(client):
    client, server = client
    answers = answer_blind(client, blind_jobs(POOLED, ["blind"]))
    verdicts = leakage_verdicts(answers, alpha=0.05, max_share=0.5)
    assert all(v.removed for v in verdicts)  # the truth is the longest option of all three
    out = repair_leaky(client, "writer", POOLED, answers, verdicts, ["blind"], max_rounds=2, alpha=0.05,
                       max_share=0.5)
    final = {v.question_id: v for v in out.verdicts}
    assert out.repaired_round == {"q_fixed": 1}
    assert not final["q_fixed"].removed and final["q_fixed"].reason.startswith("repaired in round 1: 0/4 right")
    assert final["q_stubborn"].removed and "still answered blind after repair round 2" in final["q_stubborn"].reason
    assert final["q_count"].removed and final["q_count"].reason == verdicts[2].reason  # not a synthesis question
    # the truth keeps its letter; the wrong options are the writer's edits
    fixed = out.options["q_fixed"]
    assert fixed[0] == POOLED[0]["options"][0] and [o["text"] for o in fixed[1:]] == REPAIRED
    assert {o["origin"] for o in fixed[1:]} == {"repair"}
    # every round is kept: writer call, option check, blind re-test
    steps = [(s["question_id"], s["round"], s["step"], s["status"]) for s in out.steps]
    assert steps == [("q_fixed", 1, "perturbation", "ok"), ("q_fixed", 1, "check", "ok"),
                     ("q_stubborn", 1, "perturbation", "ok"), ("q_stubborn", 1, "check", "ok"),
                     ("q_fixed", 1, "blind", "kept"), ("q_stubborn", 1, "blind", "removed"),
                     ("q_stubborn", 2, "perturbation", "ok"), ("q_stubborn", 2, "check", "ok"),
                     ("q_stubborn", 2, "blind", "removed")]
    assert all(s["call_id"] for s in out.steps if s["step"] == "perturbation")
    writer_prompts = [r.prompt for r in server.requests if r.model == "writer"]
    assert len(writer_prompts) == 3 and "picked the correct answer in 4 of 4 tries" in writer_prompts[0]
    assert "Draft wrong options:\n- The person is a child" in writer_prompts[0]
    assert {a["round"] for a in out.answers} == {0, 1, 2} and len(out.answers) == 12 + 8 + 4
    counts = repair_counts([{**v.__dict__, "repair_round": out.repaired_round.get(v.question_id)}
                            for v in out.verdicts])
    assert counts["Human2Text"] == {"pooled": 2, "tested": 2, "removed": 1, "repaired": 1}


def test_no_writer_or_zero_rounds_only_removes(client):
    client, server = client
    answers = answer_blind(client, blind_jobs(POOLED[:1], ["blind"]))
    verdicts = leakage_verdicts(answers)
    for writer, rounds in ((None, 2), ("writer", 0)):
        out = repair_leaky(client, writer, POOLED[:1], answers, verdicts, ["blind"], 2 if rounds else 0, 0.05, 0.5)
        assert out.verdicts[0].removed and not out.steps and not out.repaired_round
    assert not any(r.model == "writer" for r in server.requests)


def test_feedback_names_the_blind_picks():
    answers = [{"status": "parsed", "chosen": "A", "options": [TRUTH, "x", "y", "z"]},
               {"status": "parsed", "chosen": "A", "options": ["x", TRUTH, "y", "z"]},
               {"status": "failed", "chosen": None, "options": [TRUTH, "x", "y", "z"]}]
    note = blind_feedback(POOLED[0] | {"options": [{"letter": "A", "text": TRUTH}, {"letter": "B", "text": "x"},
                                                   {"letter": "C", "text": "y"}, {"letter": "D", "text": "z"}]}, answers)
    assert "correct answer in 1 of 2 tries" in note and "the correct answer: 1; 'x': 1; 'y': 0; 'z': 0" in note
