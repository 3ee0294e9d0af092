"""Model-built families (SCM, AST, ATD, T2H, AR) through the real MllmClient and HTTP to a loopback
OpenAI-compatible server, on a generated video with hand-made L1 tracks (the red-box video is rendered)."""

from __future__ import annotations

import json

import pytest

from hvbench_assets.core.mllm import MODEL_CALLS, MllmClient, RetryPolicy, parse_registry
from hvbench_assets.core.render.questions import render_question_video
from hvbench_assets.core.tasks.calls import asker
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.labels_factory import clip_labels, full, track
from hvbench_assets.testkit.media_factory import moving_square_video

TRUTH = "we are testing the speech content matching rule today"


def reply_for(prompt: str) -> str:
    """A scripted model: it answers each task prompt in the requested form."""
    if "sentence someone says" in prompt:
        return json.dumps({"sentences": ["we are checking the voice and text matching step now",
                                         "they were trying the spoken words comparison rule again",
                                         "you are testing the speech content pairing test today"]})
    if "short action" in prompt:
        return '```json\n{"actions": ["begins to clap", "begins to stand up", "begins to drink"]}\n```'
    if "singles this person out" in prompt:
        return "The person is the one in the red shirt on the left, nodding slowly."
    if "attitude towards" in prompt:
        return "The person smiles at the cake and claps, clearly pleased with it."
    if "multiple-choice question about the attitude" in prompt:
        return json.dumps({"question": "What is the attitude of the person in the red shirt towards the cake?",
                           "attitude": "positive"})
    return "?"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=lambda req: reply_for(req.prompt)) as s:
        yield s


@pytest.fixture
def ask_factory(server, warehouse):
    reg = parse_registry({"models": {"m": {"model_id": "org/vl", "base_url": server.base_url, "max_frames": 6,
                                           "max_side": 160}}}, environ={})
    client = MllmClient(reg, warehouse, retry=RetryPolicy(max_attempts=2, base_s=0.01))
    return lambda: asker(client, reg.get("m"), "clip", "test")


@pytest.fixture
def video(tmp_path):
    return moving_square_video(tmp_path / "clip.mp4", seconds=10.0, size=(320, 240))


def red_box(labels, out_dir):
    return lambda tids: render_question_video(labels.clip.path, labels.clip.sha256, labels.tracks,
                                              {"kind": "red_box", "track_ids": sorted(tids)}, out_dir)


def test_scm_distractors_from_the_model(server, ask_factory, warehouse):
    labels = clip_labels(duration_s=6, tracks=[full(0, 6)], speaking=(0,))
    out = run_family(TASK_BY_ABBREV["SCM"], labels, ask=ask_factory())
    q, marking = out.question_row()
    assert q["answer_text"] == TRUTH and len(q["options"]) == 4 and marking == {"kind": "none"}
    assert {o["origin"] for o in q["options"]} == {"truth", "model"}
    assert all(0.7 <= r <= 1.3 for r in q["rule_params"]["build"]["length_ratios"])
    # the call is logged and cached: the same build again sends nothing
    assert warehouse.count(MODEL_CALLS, id=q["call_ids"][0]) == 1
    before = server.request_count
    assert run_family(TASK_BY_ABBREV["SCM"], labels, ask=ask_factory()).question_row()[0] == q
    assert server.request_count == before


def test_scm_duplicate_distractor_fails_the_candidate(server, ask_factory):
    server.responder = lambda req: json.dumps({"sentences": [TRUTH, "a b", "a b"]})
    out = run_family(TASK_BY_ABBREV["SCM"], clip_labels(duration_s=6, tracks=[full(0, 6)], speaking=(0,)),
                     ask=ask_factory())
    assert out.status == "failed" and "copy of the truth" in out.candidate_row()["reason"]


def test_ast_needs_annotation_then_asks_for_different_actions(server, ask_factory, video, tmp_path):
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], path=video)
    fam = TASK_BY_ABBREV["AST"]
    assert run_family(fam, labels, ask=ask_factory(), annotation=lambda t: None).status == "awaiting_annotation"
    assert server.request_count == 0
    ann = {"annotation_id": "a9", "value": {"action": "begins to wave", "start_s": 4}}
    q, marking = run_family(fam, labels, ask=ask_factory(), annotation=lambda t: ann).question_row()
    assert q["answer_text"] == "begins to wave" and "second 4" in q["question"]
    assert sorted(o["text"] for o in q["options"] if o["origin"] == "model") == \
        ["begins to clap", "begins to drink", "begins to stand up"]
    assert marking == {"kind": "red_box", "track_ids": [0]} and q["annotation_ids"] == ["a9"]


def test_atd_describes_the_red_boxed_person_and_builds_ranges(server, ask_factory, video, tmp_path):
    t = track(0, 50, 149)  # 2.0 s .. 6.0 s of 10 s: 40 % of the frames
    labels = clip_labels(duration_s=10, tracks=[t, full(1, 10, x=200)], path=video)
    out = run_family(TASK_BY_ABBREV["ATD"], labels, ask=ask_factory(), red_box_video=red_box(labels, tmp_path / "q"))
    q, marking = out.question_row()
    assert q["answer_text"] == "From 2 s to 6 s" and marking == {"kind": "none"}
    assert q["question"].startswith("The person is the one in the red shirt on the left")
    assert len(server.requests[-1].images) == 6  # the describer saw frames of the red-box video
    assert list((tmp_path / "q").glob("red_box-*.mp4"))


def test_t2h_numbers_every_person_and_the_description_picks_one(server, ask_factory, video, tmp_path):
    labels = clip_labels(duration_s=10, tracks=[full(i, 10, x=10 + 60 * i) for i in range(4)], path=video)
    out = run_family(TASK_BY_ABBREV["T2H"], labels, ask=ask_factory(), red_box_video=red_box(labels, tmp_path / "q"))
    q, marking = out.question_row()
    # every box carries the clip's person number (left to right), the options name them in any option order
    assert marking["numbers"] == {"0": 1, "1": 2, "2": 3, "3": 4}
    assert sorted(o["text"] for o in q["options"]) == ["Person 1", "Person 2", "Person 3", "Person 4"]
    target = q["target_track_ids"][0]
    assert q["answer_text"] == f"Person {marking['numbers'][str(target)]}"
    three = clip_labels(duration_s=10, tracks=[full(i, 10, x=10 + 60 * i) for i in range(3)], path=video)
    assert run_family(TASK_BY_ABBREV["T2H"], three).candidate_row()["reason"] == \
        "tracks sharing the longest presence=3 not in (3..7)"


def test_ar_is_provisional_with_fixed_options(server, ask_factory, video, tmp_path):
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], path=video)
    out = run_family(TASK_BY_ABBREV["AR"], labels, ask=ask_factory(), red_box_video=red_box(labels, tmp_path / "q"))
    q, marking = out.question_row()
    assert q["provisional"] and q["answer_text"] == "Positive" and len(q["call_ids"]) == 2
    assert sorted(o["text"] for o in q["options"]) == ["Indeterminate", "Negative", "Neutral", "Positive"]
    assert q["question"].startswith("What is the attitude") and marking["kind"] == "red_box"


def test_ar_garbage_reply_is_a_failed_candidate(server, ask_factory, video, tmp_path):
    server.responder = lambda req: "I cannot help with that."
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], path=video)
    out = run_family(TASK_BY_ABBREV["AR"], labels, ask=ask_factory(), red_box_video=red_box(labels, tmp_path / "q"))
    assert out.status == "failed" and "no JSON object" in out.candidate_row()["reason"]


def test_t2h_boxes_every_person_on_screen_not_only_the_co_present(server, ask_factory, video, tmp_path):
    # four people share the whole clip, a fifth walks in for 3 s: the target is drawn from the four, but the
    # fifth is on screen too, so it gets a numbered box and is an option (the paper marks all individuals)
    tracks = [full(i, 10, x=10 + 60 * i) for i in range(4)] + [track(4, 100, 174, x=260)]
    labels = clip_labels(duration_s=10, tracks=tracks, path=video)
    out = run_family(TASK_BY_ABBREV["T2H"], labels, ask=ask_factory(), red_box_video=red_box(labels, tmp_path / "q"))
    q, marking = out.question_row()
    assert q["target_track_ids"][0] in range(4) and out.verdict.measured["people_boxed"] == 5
    assert len(q["options"]) == 5 and sorted(marking["numbers"]) == ["0", "1", "2", "3", "4"]


# -- distractor checks with one retry (replies.parsed_call, as in the synthesis chain) ------------------------
SHORT = ["ok", "fine then", "we are testing it"]  # far shorter than the truth: not sentences of its kind


def bad_then(good, bad_reply: str):
    """A responder whose first distractor reply is `bad_reply` and whose retry (the prompt names the problem)
    is answered by `good`."""
    return lambda req: good(req.prompt) if "could not be used" in req.prompt else \
        (bad_reply if ("sentence someone says" in req.prompt or "short action" in req.prompt) else good(req.prompt))


def test_scm_short_sentences_are_asked_again_with_the_problem_named(server, ask_factory):
    server.responder = bad_then(reply_for, json.dumps({"sentences": SHORT}))
    out = run_family(TASK_BY_ABBREV["SCM"], clip_labels(duration_s=6, tracks=[full(0, 6)], speaking=(0,)),
                     ask=ask_factory())
    q, _ = out.question_row()
    assert out.status == "selected" and q["rule_params"]["build"]["attempt"] == 2 and len(q["call_ids"]) == 2
    assert "length 2 outside" in server.requests[-1].prompt  # the retry named what was wrong


def test_scm_bad_twice_is_a_failed_row_with_the_reason(server, ask_factory):
    server.responder = lambda req: json.dumps({"sentences": SHORT})
    out = run_family(TASK_BY_ABBREV["SCM"], clip_labels(duration_s=6, tracks=[full(0, 6)], speaking=(0,)),
                     ask=ask_factory())
    row = out.candidate_row()
    assert out.status == "failed" and row["rule"] == "distractors" and server.request_count == 2
    assert "unusable twice" in row["reason"] and "length 2 outside" in row["reason"]


ANN = {"annotation_id": "a9", "value": {"action": "begins to wave", "start_s": 4}}


def test_ast_distractors_come_from_the_bta_action_list(server, ask_factory, video):
    from hvbench_assets.core.tasks.families.behavior_temporal_analysis import action_list as bta_action_list

    steps = [{"step": "caption", "status": "ok", "payload": {"parsed": {
        "action_change": True, "action_sequence": "waves, sits down, drinks water and then claps"}}}]
    listed = bta_action_list(steps)
    assert listed == ("waves", "sits down", "drinks water", "claps")
    server.responder = lambda req: json.dumps({"actions": ["begins to sit down", "begins to drink water",
                                                           "begins to clap"]})
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], path=video)
    out = run_family(TASK_BY_ABBREV["AST"], labels, ask=ask_factory(), annotation=lambda t: ANN, bta_actions=listed)
    q, _ = out.question_row()
    assert q["rule_params"]["build"]["distractor_source"] == "bta_action_list"
    assert "waves; sits down; drinks water; claps" in server.requests[-1].prompt
    assert sorted(o["text"] for o in q["options"] if o["origin"] == "model") == \
        ["begins to clap", "begins to drink water", "begins to sit down"]
    # no BTA list: today's prompt with the L4 context
    assert bta_action_list([]) == () and bta_action_list([{**steps[0], "status": "rejected"}]) == ()
    out = run_family(TASK_BY_ABBREV["AST"], labels, ask=ask_factory(), annotation=lambda t: ANN)
    assert out.result.details["distractor_source"] == "prompt" and "What is known" in server.requests[-1].prompt


def test_ast_actions_worded_otherwise_are_asked_again_then_fail(server, ask_factory, video):
    labels = clip_labels(duration_s=10, tracks=[full(0, 10)], path=video)
    bare = '{"actions": ["clap", "stand up", "drink"]}'  # not "begins to ...", like the annotated action
    server.responder = bad_then(reply_for, bare)
    out = run_family(TASK_BY_ABBREV["AST"], labels, ask=ask_factory(), annotation=lambda t: ANN)
    assert out.status == "selected" and out.result.details["attempt"] == 2
    assert "write it like the distractors" in server.requests[-1].prompt
    server.responder = lambda req: bare
    nod = {"annotation_id": "a10", "value": {"action": "begins to nod", "start_s": 5}}  # new requests, not cached
    out = run_family(TASK_BY_ABBREV["AST"], labels, ask=ask_factory(), annotation=lambda t: nod)
    assert out.status == "failed" and "write it like the distractors" in out.candidate_row()["reason"]
