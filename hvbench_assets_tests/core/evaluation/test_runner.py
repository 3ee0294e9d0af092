"""The evaluation runner against the real MLLM client and a real OpenAI-compatible HTTP server."""

from __future__ import annotations

import shutil

import pytest

from hvbench_assets.core.benchmark import load_benchmark
from hvbench_assets.core.evaluation import (
    EVAL_RESPONSES,
    EVAL_RUNS,
    EvalConfig,
    MllmAnswerer,
    evaluate,
    run_id_for,
)
from hvbench_assets.core.scoring.circular import circular_correct
from hvbench_assets.testkit.bench_factory import (
    ITEMS_PER_TASK,
    SPEC,
    item_of,
    options_in,
    right_letter,
)
from hvbench_assets.testkit.fake_openai_server import FakeReply
from hvbench_assets_tests.core.evaluation.conftest import make_client

N_ITEMS = len(SPEC) * ITEMS_PER_TASK


def styled_responder(items):
    """Each model answers in its own style; fake_vl is wrong on every item #2."""
    def respond(req):
        p = req.prompt
        item = item_of(p, items)
        idx = int(item.qid.rsplit("_", 1)[1])
        right = right_letter(p, items)
        wrong = next(letter for letter, _ in options_in(p) if letter != right)
        if req.model == "fake_vl":
            return f"The answer is ({right if idx != 2 else wrong})."
        if req.model == "fake_av":
            return f"**{right}**"
        if req.model == "fake_text":
            if idx == 1:
                return "I'm sorry, I can't tell from these frames."
            text = dict(options_in(p))[right]
            return f"The person seems {text}."
        if req.model == "fake_refuser":
            return "I cannot determine this."
        if req.model == "judge":  # judges map replies to letters only when told a text names an option
            return "NONE"
        return "?"
    return respond


@pytest.fixture
def bench(toy_bench):
    root, _ = toy_bench
    return load_benchmark(root)


def test_every_reply_is_recorded_with_parse_correctness_latency_tokens(bench, toy_bench, fake_server, warehouse):
    items = toy_bench[1]
    fake_server.responder = styled_responder(items)
    cfg = EvalConfig(model="fake_vl", n_frames=4, concurrency=3)
    out = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse, cfg, progress=False)
    assert (out.asked, out.answered, out.failed, out.status) == (N_ITEMS, N_ITEMS, 0, "complete")
    rows = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id)
    assert len(rows) == N_ITEMS
    for r in rows:
        assert r["response"].startswith("The answer is (") and r["status"] == "parsed"
        assert r["correct"] == (not r["question_id"].endswith("_2"))
        assert r["frames_sent"] == 4 and r["tokens_in"] > 0 and r["tokens_out"] > 0 and r["latency_s"] >= 0
        assert r["call_id"] and r["model"] == "fake_vl" and r["backend"] == "mllm_client"
        assert r["audio_sent"] is False
    assert all(len(req.images) == 4 and not req.audio for req in fake_server.requests)
    assert "Reply with the option's letter only" in fake_server.requests[0].prompt
    run = warehouse.rows(EVAL_RUNS, run_id=out.run_id)[0]
    assert (run["n_answered"], run["status"], run["config"]["n_frames"]) == (N_ITEMS, "complete", 4)


def test_fps_sampling_and_audio_for_audio_models(bench, toy_bench, fake_server, warehouse):
    fake_server.responder = styled_responder(toy_bench[1])
    out = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse,
                   EvalConfig(model="fake_av", n_frames=None, fps=5.0, tasks=("AVSM",)), progress=False)
    assert out.answered == ITEMS_PER_TASK
    assert all(len(r.images) == 5 and len(r.audio) == 1 and r.audio[0][:4] == b"RIFF" for r in fake_server.requests)
    rows = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id)
    assert all(r["correct"] and r["audio_sent"] and r["method"] == "bare_letter" for r in rows)


def test_option_text_and_refusals(bench, toy_bench, fake_server, warehouse):
    fake_server.responder = styled_responder(toy_bench[1])
    out = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse,
                   EvalConfig(model="fake_text", n_frames=2), progress=False)
    rows = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id)
    refused = [r for r in rows if r["question_id"].endswith("_1")]
    assert refused and all((r["status"], r["method"], r["chosen"], r["correct"]) == ("unparsed", "refusal", None, False)
                           for r in refused)
    rest = [r for r in rows if not r["question_id"].endswith("_1")]
    assert all(r["method"] == "option_text" and r["correct"] for r in rest)


def test_judge_is_asked_only_for_unparsed_replies(bench, toy_bench, fake_server, warehouse):
    items = toy_bench[1]

    def respond(req):
        if req.model == "judge":
            return "NONE" if "cannot" in req.prompt else "B"
        return "I cannot determine this." if item_of(req.prompt, items).qid.endswith("_0") else "It is the second one."

    fake_server.responder = respond
    out = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse,
                   EvalConfig(model="fake_refuser", n_frames=2, judge_model="judge", tasks=("ER",)), progress=False)
    rows = {r["question_id"]: r for r in warehouse.rows(EVAL_RESPONSES, run_id=out.run_id)}
    assert (rows["Emotion_Recognition_0"]["status"], rows["Emotion_Recognition_0"]["method"]) == ("unparsed", "judge_none")
    assert (rows["Emotion_Recognition_1"]["chosen"], rows["Emotion_Recognition_1"]["method"]) == ("B", "judge")
    assert rows["Emotion_Recognition_1"]["judge_response"] == "B"
    assert sum(r.model == "judge" for r in fake_server.requests) == ITEMS_PER_TASK


def test_killed_run_resumes_without_repeating_an_answered_item(bench, toy_bench, fake_server, warehouse):
    fake_server.responder = styled_responder(toy_bench[1])
    answerer = MllmAnswerer(make_client(fake_server, cache=None))  # no call cache: a repeat would reach the server
    cfg = EvalConfig(model="fake_vl", n_frames=2, concurrency=2)
    seen = []

    def kill_after_seven(row):
        seen.append(row)
        if len(seen) == 7:
            raise KeyboardInterrupt("simulated kill")

    with pytest.raises(KeyboardInterrupt):
        evaluate(bench, answerer, warehouse, cfg, progress=False, on_result=kill_after_seven)
    first = [r.prompt for r in fake_server.requests]
    stored = warehouse.count(EVAL_RESPONSES, run_id=run_id_for(bench.name, cfg))
    assert 7 <= stored == len(first) < N_ITEMS  # every reply that arrived was stored
    assert warehouse.rows(EVAL_RUNS)[0]["status"] == "interrupted"
    fake_server.reset()
    out = evaluate(bench, answerer, warehouse, cfg, progress=False)
    second = [r.prompt for r in fake_server.requests]
    assert out.skipped == stored and out.asked == N_ITEMS - stored
    assert not set(first) & set(second) and len(set(first) | set(second)) == N_ITEMS == len(first) + len(second)
    assert warehouse.count(EVAL_RESPONSES, run_id=out.run_id) == N_ITEMS
    fake_server.reset()
    again = evaluate(bench, answerer, warehouse, cfg, progress=False)
    assert (again.asked, again.skipped, fake_server.request_count) == (0, N_ITEMS, 0)


def test_server_failures_are_rows_and_are_retried_on_resume(bench, toy_bench, fake_server, warehouse):
    fake_server.responder = styled_responder(toy_bench[1])
    fake_server.script(*[FakeReply.server_error() for _ in range(4)])  # first four calls fail (1 attempt each)
    answerer = MllmAnswerer(make_client(fake_server, cache=None))
    cfg = EvalConfig(model="fake_vl", n_frames=2, concurrency=1)
    out = evaluate(bench, answerer, warehouse, cfg, progress=False)
    assert (out.failed, out.answered, out.status) == (4, N_ITEMS - 4, "partial")
    failed = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id, status="failed")
    assert len(failed) == 4 and all(r["error"] and r["method"] == "call_error" and not r["correct"] for r in failed)
    fake_server.reset()
    out2 = evaluate(bench, answerer, warehouse, cfg, progress=False)
    assert (out2.asked, out2.failed, fake_server.request_count, out2.status) == (4, 0, 4, "complete")


def test_concurrency_is_bounded(bench, toy_bench, fake_server, warehouse):
    fake_server.responder = styled_responder(toy_bench[1])
    fake_server.latency_s = 0.05
    evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse,
             EvalConfig(model="fake_vl", n_frames=1, concurrency=3), progress=False)
    assert 2 <= fake_server.max_in_flight <= 3


def test_circular_mode_exposes_a_position_biased_model(bench, fake_server, warehouse):
    fake_server.responder = lambda req: "A"
    cfg = EvalConfig(model="fake_vl", n_frames=1, circular=True, tasks=("ER", "AVSM"))
    out = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse, cfg, progress=False)
    rows = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id)
    assert len(rows) == ITEMS_PER_TASK * (4 + 2)  # one row per rotation
    plain = [r for r in rows if r["rotation"] == 0]
    assert sum(r["correct"] for r in plain) == sum(r["answer_original"] == "A" for r in plain) > 0
    verdicts = circular_correct(rows)
    assert len(verdicts) == 2 * ITEMS_PER_TASK and not any(verdicts.values())
    # letters map back to the published order: always "A" as asked = a different original option per rotation
    for r in rows:
        assert r["chosen"] == "A" and r["chosen_original"] == "ABCDE"[(0 - r["rotation"]) % r["n_options"]]
    assert len({rr.prompt for rr in fake_server.requests}) == len(rows)


def test_missing_video_fails_that_item_only(tmp_path, toy_bench, fake_server, warehouse):
    root, items = toy_bench
    (tmp_path / "Human_Count.jsonl").write_text((root / "Human_Count.jsonl").read_text())
    (tmp_path / "vids" / "Human_Count").mkdir(parents=True)
    shutil.copy(root / "Human_Count" / "Human_Count_0.mp4", tmp_path / "vids" / "Human_Count")
    partial = load_benchmark(tmp_path, video_root=tmp_path / "vids")  # 1 of 3 present: one warning, no stop
    assert partial.video_problem is None and len(partial.warnings) == 1
    assert "2 of 3 videos not found" in str(partial.warnings[0])
    fake_server.responder = styled_responder(items)
    out = evaluate(partial, MllmAnswerer(make_client(fake_server)), warehouse,
                   EvalConfig(model="fake_vl", n_frames=1), progress=False)
    assert (out.failed, out.answered, fake_server.request_count) == (2, 1, 1)
    failed = warehouse.rows(EVAL_RESPONSES, run_id=out.run_id, status="failed")
    assert all(r["method"] == "video" and f"{r['question_id']}.mp4" in r["error"] for r in failed)
    bench = load_benchmark(tmp_path, video_root=root)  # the right folder: only the two failed items are asked
    again = evaluate(bench, MllmAnswerer(make_client(fake_server)), warehouse, EvalConfig(model="fake_vl", n_frames=1),
                     progress=False)
    assert (again.answered, again.skipped, again.failed) == (2, 1, 0)


def test_seeded_runs_are_separate_and_send_the_seed(bench, fake_server, warehouse):
    fake_server.responder = lambda req: "A" if req.body.get("seed") == 0 else "B"
    answerer = MllmAnswerer(make_client(fake_server))
    outs = [evaluate(bench, answerer, warehouse, EvalConfig(model="fake_vl", n_frames=1, tasks=("ER",), seed=k),
                     progress=False) for k in (0, 1)]
    assert outs[0].run_id != outs[1].run_id and all(o.answered == ITEMS_PER_TASK for o in outs)
    assert sorted(r.body["seed"] for r in fake_server.requests) == [0] * ITEMS_PER_TASK + [1] * ITEMS_PER_TASK
    unseeded = EvalConfig(model="fake_vl", n_frames=1)
    assert "seed" not in unseeded.answer_settings()  # run ids of unseeded runs do not change
