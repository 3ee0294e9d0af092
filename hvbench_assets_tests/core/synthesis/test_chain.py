"""The synthesis chain through the real MllmClient over HTTP to a loopback OpenAI-compatible server scripted
per model: a writer and three answering models that disagree, on a generated video with hand-made L1 tracks
(the marked videos are rendered)."""

from __future__ import annotations

import json

import pytest

from hvbench_assets.core.mllm import MODEL_CALLS, MllmClient, RetryPolicy, parse_registry
from hvbench_assets.core.render.questions import render_question_video
from hvbench_assets.core.synthesis.calls import SynthesisModels, too_few_answerers
from hvbench_assets.core.synthesis.ranking import rerank_steps
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.labels_factory import clip_labels, full, track
from hvbench_assets.testkit.media_factory import moving_square_video
from hvbench_assets.testkit.scripted_synthesis import GOOD_DISTRACTORS, SCORES, TRUTH, Script

@pytest.fixture
def script():
    return Script()


@pytest.fixture
def server(script):
    with FakeOpenAIServer(responder=script) as s:
        yield s


@pytest.fixture
def registry(server):
    url = server.base_url
    entry = {"base_url": url, "max_frames": 4, "max_side": 128}
    return parse_registry({"models": {
        "writer": {"model_id": "org/writer", **entry},
        "strong": {"model_id": "org/strong", "weight": 2.0, **entry},
        "mid": {"model_id": "org/mid", **entry},
        "weak": {"model_id": "org/weak", **entry},
    }, "active": ["strong", "mid", "weak"]}, environ={})


@pytest.fixture
def run(registry, warehouse, tmp_path):
    video = moving_square_video(tmp_path / "clip.mp4", seconds=8.0, size=(320, 240))

    def go(abbrev, labels=None):
        labels = labels or clip_labels(duration_s=8, tracks=[full(0, 8)], path=video)
        labels.rows["facial_description"] = [{"video_id": "clip", "track_id": t.track_id, "status": "ok",
                                              "text": "The face is calm at first, then smiles widely."}
                                             for t in labels.tracks]
        client = MllmClient(registry, warehouse, retry=RetryPolicy(max_attempts=2, base_s=0.01))
        models = SynthesisModels(client, registry.get("writer"), registry.active(), "clip", abbrev)

        def marked(marking):
            return render_question_video(labels.clip.path, labels.clip.sha256, labels.tracks, marking, tmp_path / "q")

        out = run_family(TASK_BY_ABBREV[abbrev], labels, marked_video=marked, synthesis=models)
        return out, models

    return go


def steps_of(out, name):
    return [s for s in out.steps if s["step"] == name]


def test_bta_chain_weights_pick_the_weak_models_answer_and_duplicates_are_caught(run, server, script, warehouse):
    script.perturb = [[GOOD_DISTRACTORS[0], GOOD_DISTRACTORS[0], GOOD_DISTRACTORS[2]], GOOD_DISTRACTORS]
    out, models = run("BTA")
    q, marking = out.question_row()
    assert out.status == "selected", (out.candidate_row(), out.steps)
    assert q["answer_text"] == TRUTH
    assert {o["text"] for o in q["options"]} == {TRUTH, *GOOD_DISTRACTORS}
    assert {o["origin"] for o in q["options"] if o["text"] != TRUTH} == {"perturbation"}
    assert marking == {"kind": "red_box", "track_ids": [0]} and q["provisional"] is False
    assert [s["step"] for s in out.steps] == ["caption", "question", "answer", "answer", "answer", "answer", "score",
                                              "score", "score", "total", "perturbation", "check", "perturbation", "check"]
    answers = steps_of(out, "answer")
    assert [a["model"] for a in answers] == ["writer", "strong", "mid", "weak"] and len({a["payload"]["text"] for a in answers}) == 4
    total = steps_of(out, "total")[0]["payload"]
    assert total["totals"] == [26, 22, 19, 27] and total["winner"] == 3 and total["winner_sources"] == ["weak"]
    assert total["agreement"] == {"strong": False, "mid": False, "weak": True}
    # recomputed from the stored score rows alone; with equal weights the writer's draft would have won
    assert rerank_steps(out.steps).winner == 3
    assert rerank_steps(out.steps, {"strong": 1.0}).winner == 0
    checks = steps_of(out, "check")
    assert checks[0]["status"] == "failed" and any("same" in p for p in checks[0]["payload"]["problems"])
    assert checks[1]["status"] == "ok" and len(checks[1]["payload"]["length_ratios"]) == 3
    assert steps_of(out, "perturbation")[1]["attempt"] == 2
    assert q["rule_params"]["build"]["length_ratios"] == checks[1]["payload"]["length_ratios"]
    # every step with a call points at its model_calls row, and the question lists them all
    ids = [s["call_id"] for s in out.steps if s["call_id"]]
    assert len(set(ids)) == 10 and q["call_ids"] == list(dict.fromkeys(ids))
    assert answers[0]["call_id"] == steps_of(out, "question")[0]["call_id"]  # the draft answer's origin
    assert all(warehouse.count(MODEL_CALLS, id=c) == 1 for c in ids)
    assert models.stats.made == 10 and models.stats.cached == 0 and models.stats.tokens_in > 0
    # the same build again: every call from the cache, the same question
    sent = server.request_count
    again, models2 = run("BTA")
    assert server.request_count == sent and models2.stats.cached == 10
    assert again.question_row()[0] == q


def test_eta_caption_without_an_emotion_change_is_rejected(run, script):
    script.eta_caption = json.dumps({"emotion_change": False, "emotion_sequence": "calm throughout"})
    out, _ = run("ETA")
    assert out.status == "rejected" and out.candidate_row()["rule"] == "emotion_change"
    (cap,) = out.steps
    assert cap["status"] == "rejected" and cap["payload"]["parsed"]["emotion_change"] is False
    assert out.question_row() == (None, None)


def test_bca_caption_without_a_causal_event_is_rejected(run, script):
    script.bca_caption = '```json\n{"causal_events_exist": false, "causal_events_description": ""}\n```'
    out, _ = run("BCA")
    assert out.status == "rejected" and out.candidate_row()["rule"] == "causal_event"
    assert "causal_events_exist=false" in out.candidate_row()["reason"]


def test_malformed_caption_is_retried_once_then_fails_keeping_the_text(run, script, server):
    script.bta_caption = "{'action_change': True, 'action_sequence': waves}"  # Python-ish, not JSON
    out, _ = run("BTA")
    assert out.status == "failed" and out.candidate_row()["rule"] == "caption"
    caps = steps_of(out, "caption")
    assert [c["attempt"] for c in caps] == [1, 2] and all(c["status"] == "failed" for c in caps)
    assert all(c["payload"]["raw"] == script.bta_caption for c in caps)
    assert "could not be used" in server.requests[-1].prompt  # the retry said why
    assert "waves" in out.candidate_row()["reason"]


def test_leaking_question_is_rejected(run, script):
    script.question = {"question": "How does the person in the red shirt feel, looking so happy and surprised?",
                       "answer": "The person looks happy and surprised."}
    out, _ = run("ER")
    assert out.status == "rejected" and out.candidate_row()["rule"] == "question_leak"
    q = steps_of(out, "question")[0]
    assert q["status"] == "rejected" and q["payload"]["leaked"] == ["happy", "surpris"]


def test_er_stores_the_polarity_of_the_truth(run, script):
    script.question = {"question": "Which emotion does the person in the red shirt show?",
                       "answer": "The person looks angry."}
    script.answers = {"org/strong": "The person looks sad and tired.", "org/mid": "The person looks happy.",
                      "org/weak": "The person looks calm."}
    script.perturb = [["The person looks sad and annoyed.", "The person looks joyful now.", "The person is quite tense."]]
    out, _ = run("ER")
    q, _ = out.question_row()
    # totals: draft 10+8+8=26, strong 12+5+5=22, mid 4+9+6=19, weak 18+4+5=27 -> the weak model's "calm"
    assert q["answer_text"] == "The person looks calm." and q["rule_params"]["polarity"] == "neutral"
    assert steps_of(out, "caption")[0]["payload"]["source"] == "labels" and steps_of(out, "caption")[0]["call_id"] is None


def test_eic_numbers_and_merged_duplicate_answers(run, script, tmp_path):
    tracks = [track(i, 0, 199, x=10 + 70 * i, size=50) for i in (3, 1, 0, 2)]
    labels = clip_labels(duration_s=8, tracks=tracks, path=tmp_path / "clip.mp4")
    script.answers = {"org/strong": "2 - happy", "org/mid": "Person 3? no: 3-angry", "org/weak": "2-happy."}
    script.scores = {m: {1: 8, 2: 3} for m in SCORES}
    script.perturb = [["2-sad", "3-happy", "4-happy"]]
    out, _ = run("EIC", labels)
    q, marking = out.question_row()
    assert marking == {"kind": "numbers", "numbers": {"0": 1, "1": 2, "2": 3, "3": 4}}  # left to right
    assert "numbered 1, 2, 3, 4" in q["question"] and q["answer_text"] == "2-happy"
    assert "number-emotion, for example 1-happy" in q["question"]
    cands = steps_of(out, "total")[0]["payload"]["candidates"]
    assert cands == [{"text": "2-happy", "sources": ["strong", "weak"]}, {"text": "3-angry", "sources": ["mid"]}]


def test_h2t_caption_is_the_draft_answer(run, script, tmp_path):
    tracks = [full(0, 8, x=20), full(1, 8, x=120), track(2, 0, 100, x=220)]
    labels = clip_labels(duration_s=8, tracks=tracks, path=tmp_path / "clip.mp4")
    script.answers = {"org/strong": "the person is the one on the left in red.", "org/mid": "A man on the right.",
                      "org/weak": "The person is sitting in the middle, in blue."}
    script.perturb = [["The person is the one in the blue shirt on the right, waving.",
                       "The person is the one in the red shirt on the right, sitting.",
                       "The person is the one in the green coat on the left, waving."]]
    out, _ = run("H2T", labels)
    answers = steps_of(out, "answer")
    assert answers[0]["payload"] == {"candidate": 1, "text": script.h2t_caption, "source": "question"}
    assert answers[2]["status"] == "failed"  # "A man on the right." does not start with "The person is"
    assert out.status == "selected" and out.question_row()[0]["answer_text"].startswith("The person is")


def test_too_few_answerers_names_the_settings(registry):
    reason = too_few_answerers(registry.active()[:2], 3, "config/models.toml")
    assert "at least 3 answering models; 2 configured (strong, mid)" in reason and "HVBENCH_MLLM_MODELS" in reason
    assert too_few_answerers(registry.active(), 3, "x") is None


def run_ar(registry, warehouse, tmp_path):
    """AR (the synthesis's first half) on a generated clip, through the describer's asker."""
    from hvbench_assets.core.tasks.calls import asker

    video = moving_square_video(tmp_path / "ar.mp4", seconds=4.0, size=(320, 240))
    labels = clip_labels(duration_s=4, tracks=[full(0, 4)], path=video)
    client = MllmClient(registry, warehouse, retry=RetryPolicy(max_attempts=2, base_s=0.01))
    return run_family(TASK_BY_ABBREV["AR"], labels, ask=asker(client, registry.get("writer"), "clip", "AR"),
                      red_box_video=lambda tids: render_question_video(
                          video, labels.clip.sha256, labels.tracks, {"kind": "red_box", "track_ids": sorted(tids)},
                          tmp_path / "q"))


AR_QUESTION = json.dumps({"question": "What is the attitude of the person in the red shirt?", "attitude": "positive"})


def test_ar_records_its_caption_and_question_steps(server, registry, warehouse, tmp_path):
    server.responder = lambda req: "She smiles at the cake and claps." if "attitude towards" in req.prompt else AR_QUESTION
    out = run_ar(registry, warehouse, tmp_path)
    assert [s["step"] for s in out.steps] == ["caption", "question"]
    assert out.steps[1]["payload"]["answer"] == "positive"
    assert [s["call_id"] for s in out.steps] == out.question_row()[0]["call_ids"]


def test_ar_unreadable_question_is_asked_again_once(server, registry, warehouse, tmp_path):
    replies = iter(["She smiles at the cake.", "positive, I think", AR_QUESTION])
    server.responder = lambda req: next(replies)
    out = run_ar(registry, warehouse, tmp_path)
    assert [(s["step"], s["status"], s["attempt"]) for s in out.steps] == [
        ("caption", "ok", 1), ("question", "failed", 1), ("question", "ok", 2)]
    assert out.steps[1]["payload"]["raw"] == "positive, I think"
    assert "could not be used" in server.requests[-1].prompt
    assert out.question_row()[0]["answer_text"] == "Positive"


def test_question_that_names_the_winning_answer_is_rejected(run, script):
    script.question = {"question": "How does the person in the red shirt feel, sitting so calm?",
                       "answer": "The person looks happy."}
    script.answers = {"org/strong": "The person looks sad.", "org/mid": "The person looks bored.",
                      "org/weak": "The person looks calm and relaxed."}
    out, _ = run("ER")  # the draft answer passes the leak check; the weak model's winner does not
    assert steps_of(out, "question")[0]["status"] == "ok"
    total = steps_of(out, "total")[0]
    assert total["status"] == "rejected" and total["payload"]["winner_leak"] == ["calm"]
    assert out.status == "rejected" and out.candidate_row()["rule"] == "question_leak"
    assert not steps_of(out, "perturbation")  # nothing spent on a question that gives its answer away


# -- every option of the answer's kind (forms.py): good, bad then good, bad twice ---------------------------
ER_QUESTION = {"question": "Which emotion does the person in the red shirt show?", "answer": "The person looks angry."}
ER_ANSWERS = {"org/strong": "The person looks sad and tense.", "org/mid": "The person looks happy.",
              "org/weak": "The person looks calm."}
ER_GOOD = ["The person looks sad and annoyed.", "The person looks joyful now.", "The person is quite tense."]
APPEARANCE = ["The person wears a red shirt.", "A woman with dark hair.", "The man on the left in blue."]


def er_script(script):
    script.question, script.answers = dict(ER_QUESTION), dict(ER_ANSWERS)


def test_er_good_distractors_pass_the_emotion_form_at_once(run, script):
    er_script(script)
    script.perturb = [ER_GOOD]
    out, _ = run("ER")
    assert out.status == "selected"
    assert [s["attempt"] for s in steps_of(out, "perturbation")] == [1] and steps_of(out, "check")[0]["status"] == "ok"


def test_er_appearance_distractors_are_asked_again_with_the_problem_named(run, script, server):
    er_script(script)
    script.perturb = [APPEARANCE, ER_GOOD]
    out, _ = run("ER")
    q, _ = out.question_row()
    assert out.status == "selected" and {o["text"] for o in q["options"]} == {"The person looks calm.", *ER_GOOD}
    first, second = steps_of(out, "check")
    assert first["status"] == "failed" and first["payload"]["problems"][0] == \
        "distractor 1 names no emotion of the taxonomy: 'The person wears a red shirt.'"
    retry = next(r.prompt for r in server.requests if "previous distractors were rejected" in r.prompt)
    assert "names no emotion of the taxonomy" in retry and "Every option must be an emotion of the taxonomy" in retry


def test_er_appearance_distractors_twice_is_a_failed_row_with_the_reason(run, script):
    er_script(script)
    script.perturb = [APPEARANCE]
    out, _ = run("ER")
    row = out.candidate_row()
    assert out.status == "failed" and row["rule"] == "option_check" and row["question_id"] is not None
    assert "names no emotion of the taxonomy" in row["reason"] and out.question_row() == (None, None)
    assert [s["status"] for s in steps_of(out, "check")] == ["failed", "failed"]


def test_answers_of_another_kind_are_dropped_and_a_draft_answer_is_asked_again(run, script, server):
    er_script(script)
    script.answers["org/mid"] = "The person is a young woman in a green shirt."  # appearance, not an emotion
    script.perturb = [ER_GOOD]
    first = {"question": ER_QUESTION["question"], "answer": "The person wears a red shirt."}

    def responder(req):
        if "Write one question" in req.prompt and "could not be used" not in req.prompt:
            return json.dumps(first)
        return script(req)

    server.responder = responder
    out, _ = run("ER")
    questions = steps_of(out, "question")
    assert [q["status"] for q in questions] == ["failed", "ok"] and "names no emotion" in questions[0]["payload"]["error"]
    mid = next(a for a in steps_of(out, "answer") if a["model"] == "mid")
    assert mid["status"] == "failed" and "names no emotion of the taxonomy" in mid["payload"]["error"]
    assert out.status == "selected"


# -- the question asks what its options answer (checks.question_kind): wrong then right, wrong twice -----------
AR_WRONG = json.dumps({"question": "Which action best describes the man in the white shirt?", "attitude": "positive"})


def ar_replies(*questions):
    """The caption, then the question replies in turn (a retry is told why in its prompt)."""
    queue = iter(questions)
    return lambda req: "She smiles at the cake and claps." if "attitude towards" in req.prompt else next(queue)


def test_ar_question_of_another_kind_is_asked_again_with_the_problem_named(server, registry, warehouse, tmp_path):
    server.responder = ar_replies(AR_WRONG, AR_QUESTION)
    out = run_ar(registry, warehouse, tmp_path)
    assert [(s["step"], s["status"], s["attempt"]) for s in out.steps] == [
        ("caption", "ok", 1), ("question", "failed", 1), ("question", "ok", 2)]
    error = out.steps[1]["payload"]["error"]
    assert "'Which action'" in error and "attitude" in error and out.steps[1]["payload"]["raw"] == AR_WRONG
    retry = server.requests[-1].prompt
    assert "could not be used" in retry and "'Which action', but its options answer the person's attitude" in retry
    q, _ = out.question_row()
    assert q["question"] == json.loads(AR_QUESTION)["question"] and q["answer_text"] == "Positive"


def test_ar_question_of_another_kind_twice_fails_keeping_the_raw_replies(server, registry, warehouse, tmp_path):
    server.responder = ar_replies(AR_WRONG, AR_WRONG)
    out = run_ar(registry, warehouse, tmp_path)
    row = out.candidate_row()
    assert out.status == "failed" and row["rule"] == "question" and out.question_row() == (None, None)
    assert "'Which action'" in row["reason"] and "raw replies kept" in row["reason"]
    assert "Which action best describes the man in the white shirt?" in row["reason"]
    assert [s["status"] for s in out.steps[1:]] == ["failed", "failed"]


ER_WRONG = {"question": "Why does the person in the red shirt look this way?", "answer": "The person looks angry."}


def test_er_question_of_another_kind_is_asked_again_then_synthesized(run, script, server):
    er_script(script)
    script.perturb = [ER_GOOD]

    def responder(req):
        if "Write one question" in req.prompt and "could not be used" not in req.prompt:
            return json.dumps(ER_WRONG)
        return script(req)

    server.responder = responder
    out, _ = run("ER")
    questions = steps_of(out, "question")
    assert [(q["status"], q["attempt"]) for q in questions] == [("failed", 1), ("ok", 2)]
    assert "'Why', but its options answer the emotion the person shows" in questions[0]["payload"]["error"]
    assert out.status == "selected" and out.question_row()[0]["question"] == ER_QUESTION["question"]


def test_er_question_of_another_kind_twice_is_a_failed_row_with_the_raw_reply(run, script):
    er_script(script)
    script.question = dict(ER_WRONG)
    out, _ = run("ER")
    row = out.candidate_row()
    assert out.status == "failed" and row["rule"] == "question" and row["question_id"] is not None
    assert "raw replies kept" in row["reason"] and ER_WRONG["question"] in row["reason"]
    assert [q["status"] for q in steps_of(out, "question")] == ["failed", "failed"]
    assert not steps_of(out, "answer")  # nothing spent on a question its options cannot answer
