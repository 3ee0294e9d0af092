"""MllmClient speaking HTTP to a real server on 127.0.0.1 (the OpenAI chat-completions protocol)."""

from __future__ import annotations

import io
import os
import wave

import cv2
import numpy as np
import pytest

from hvbench_assets.core.mllm import (
    MODEL_CALLS,
    ChatRequest,
    MllmClient,
    RetryPolicy,
    parse_registry,
    sample_frames,
)
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply

FAST = RetryPolicy(max_attempts=4, base_s=0.01, cap_s=0.05)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def registry_for(server, **fields):
    entry = {"model_id": "org/vision-7b", "base_url": server.base_url, "max_frames": 8, "max_side": 256, **fields}
    return parse_registry({"models": {"vis": entry}}, environ={}, keys=os.environ)  # keys: monkeypatched env


def test_request_carries_frames_prompt_system_params(server, warehouse, man_talking_head):
    frames = sample_frames(man_talking_head, n_frames=6, max_side=None)
    client = MllmClient(registry_for(server), warehouse, retry=FAST)
    r = client.chat("vis", "Who is speaking?", frames=frames, system="Be brief.", params={"temperature": 0.0, "max_tokens": 64})
    assert r.ok and not r.cached and r.frames_sent == 6 and r.text.startswith("fake org/vision-7b: saw 6 frames")
    (req,) = server.requests
    assert req.model == "org/vision-7b" and req.prompt == "Who is speaking?" and req.system == "Be brief."
    assert req.body["temperature"] == 0.0 and req.body["max_tokens"] == 64
    assert len(req.images) == 6
    img = cv2.imdecode(np.frombuffer(req.images[0], np.uint8), cv2.IMREAD_COLOR)
    assert max(img.shape[:2]) == 256  # 844x844 source shrunk to the model's max_side
    assert r.tokens_in == 3 + 60 and r.tokens_out == len(r.text.split())


def test_frames_beyond_the_model_cap_are_thinned_evenly(server, warehouse):
    frames = [np.full((64, 64, 3), i * 10, np.uint8) for i in range(20)]
    client = MllmClient(registry_for(server, max_frames=5), warehouse, retry=FAST)
    r = client.chat("vis", "count", frames=frames)
    assert r.frames_sent == 5 and len(server.requests[0].images) == 5
    means = [cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR).mean() for b in server.requests[0].images]
    assert means[0] < 5 and means[-1] > 185  # first and last frames kept, in order
    row = warehouse.rows(MODEL_CALLS, id=r.call_id)[0]
    assert row["inputs"]["frames_given"] == 20 and row["inputs"]["frames_sent"] == 5


def test_rerun_costs_zero_requests_even_from_a_new_client(server, warehouse):
    frames = [np.full((48, 48, 3), 90, np.uint8)] * 3
    first = MllmClient(registry_for(server), warehouse, retry=FAST).chat("vis", "describe", frames=frames)
    again = MllmClient(registry_for(server), warehouse, retry=FAST)
    second = again.chat("vis", "describe", frames=frames)
    assert server.request_count == 1 and again.requests_sent == 0
    assert second.cached and second.text == first.text and second.call_id == first.call_id
    # any change of prompt, frame pixels or params is a different request
    again.chat("vis", "describe!", frames=frames)
    again.chat("vis", "describe", frames=[np.full((48, 48, 3), 91, np.uint8)] * 3)
    again.chat("vis", "describe", frames=frames, params={"temperature": 0.7})
    assert server.request_count == 4


@pytest.mark.parametrize("fault", [
    FakeReply.rate_limited(), FakeReply.server_error(500), FakeReply.server_error(503),
    FakeReply.malformed(), FakeReply.drop(),
])
def test_transient_faults_are_retried(server, warehouse, fault):
    server.script(fault, fault)
    r = MllmClient(registry_for(server), warehouse, retry=FAST).chat("vis", "hi")
    assert r.ok and r.attempts == 3 and server.request_count == 3
    assert warehouse.rows(MODEL_CALLS, id=r.call_id)[0]["attempts"] == 3


def test_timeouts_are_retried(server, warehouse):
    server.script(FakeReply.hang(1.5))
    r = MllmClient(registry_for(server, timeout_s=0.3), warehouse, retry=FAST).chat("vis", "slow?")
    assert r.ok and r.attempts == 2


def test_gives_up_naming_model_and_endpoint_and_is_not_cached(server, warehouse):
    server.script(*[FakeReply.server_error(502)] * 4)
    client = MllmClient(registry_for(server), warehouse, retry=FAST)
    r = client.chat("vis", "hi")
    assert not r.ok and r.transient and r.text is None and r.attempts == 4
    assert "vis" in r.error and "org/vision-7b" in r.error and server.base_url in r.error and "502" in r.error
    row = warehouse.rows(MODEL_CALLS, id=r.call_id)[0]
    assert row["error"] == r.error and row["text"] is None
    r2 = client.chat("vis", "hi")  # a failure is logged but never answers from the cache
    assert r2.ok and not r2.cached and server.request_count == 5
    assert warehouse.rows(MODEL_CALLS, id=r.call_id)[0]["error"] is None


@pytest.mark.parametrize("fault,needle", [
    (FakeReply.empty(), "empty reply"), (FakeReply.no_choices(), "empty reply"), (FakeReply.bad_request("nope"), "HTTP 400"),
])
def test_permanent_faults_are_errors_not_text(server, warehouse, fault, needle):
    server.script(fault)
    r = MllmClient(registry_for(server), warehouse, retry=FAST).chat("vis", "hi")
    assert not r.ok and not r.transient and r.text is None and needle in r.error and server.request_count == 1


def test_api_key_is_sent_but_never_stored(server, warehouse, monkeypatch):
    secret = "sk-test-0123456789abcdefSECRET"
    monkeypatch.setenv("HVB_TEST_KEY", secret)
    server.api_key = secret
    reg = registry_for(server, api_key_env="HVB_TEST_KEY")
    client = MllmClient(reg, warehouse, retry=FAST)
    assert client.chat("vis", "hello").ok
    assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    server.api_key = "another"  # now the key is refused: the 401 error text must not leak it either
    bad = client.chat("vis", "hello again")
    assert not bad.ok and "401" in bad.error
    dump = str(warehouse.query("SELECT * FROM model_calls"))
    assert secret not in dump and "sk-test" not in dump
    assert "HVB_TEST_KEY" in bad.error  # the setting to fix is named; its value never is
    assert secret not in str(reg.get("vis").describe())


LEAKS = [FakeReply.leaky(200), FakeReply.leaky(200, as_json=True), FakeReply.leaky(500, as_json=True),
         FakeReply.leaky(400), FakeReply.leaky(401, as_json=True), FakeReply.leaky(404)]


@pytest.mark.parametrize("leak", LEAKS, ids=["200-html", "200-json", "500", "400", "401", "404"])
def test_a_body_echoing_the_key_never_gets_it_stored_whatever_the_status(server, warehouse, monkeypatch, leak):
    secret = "hvb-0123456789-abcdef-SECRET-xyz"  # not key-shaped: only the registry knows it is one
    other = "second-key-for-another-model-42"
    monkeypatch.setenv("HVB_TEST_KEY", secret)
    monkeypatch.setenv("HVB_OTHER_KEY", other)
    server.responder = lambda req: FakeReply(text=f"fine, and {other} too")
    reg = parse_registry({"models": {
        "vis": {"model_id": "m", "base_url": server.base_url, "api_key_env": "HVB_TEST_KEY"},
        "aux": {"model_id": "m2", "base_url": server.base_url, "api_key_env": "HVB_OTHER_KEY"}}}, environ={},
        keys=os.environ)
    server.script(*[leak] * 4)
    r = MllmClient(reg, warehouse, retry=FAST).chat("vis", "hello")
    assert not r.ok and server.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert secret not in r.error and "***" in r.error
    dump = str(warehouse.query("SELECT * FROM model_calls"))
    assert secret not in dump and "Bearer ***" in dump
    server.reset()  # unused scripted replies
    ok = MllmClient(reg, warehouse, retry=FAST).chat("vis", "hello again")  # every configured key, any text
    assert ok.ok and other not in ok.text and other not in str(warehouse.query("SELECT * FROM model_calls"))


def test_authentication_failure_is_fatal_at_once_and_stops_later_calls(server, warehouse, monkeypatch):
    monkeypatch.setenv("HVB_TEST_KEY", "a-wrong-key-123")
    server.api_key = "the-right-key-456"
    client = MllmClient(registry_for(server, api_key_env="HVB_TEST_KEY"), warehouse, retry=FAST)
    r = client.chat("vis", "hello")
    assert r.fatal and not r.transient and r.attempts == 1 and server.request_count == 1
    assert "HTTP 401" in r.error and "HVB_TEST_KEY" in r.error and "a-wrong-key-123" not in r.error
    again = client.chat("vis", "another item")
    assert again.fatal and again.error == r.error and server.request_count == 1  # no request for a known-bad key


def test_wrong_route_is_a_configuration_error_naming_the_base_url_setting(server, warehouse):
    server.script(FakeReply(status=404, json_body={"error": {"message": "The model `m` does not exist"}}))
    r = MllmClient(registry_for(server), warehouse, retry=FAST).chat("vis", "hello")
    assert r.fatal and "HTTP 404" in r.error and "HVBENCH_MLLM_VIS_BASE_URL" in r.error


def test_a_garbled_reply_is_retried_then_an_item_failure_not_an_outage(server, warehouse):
    server.script(*[FakeReply.malformed()] * 4)
    r = MllmClient(registry_for(server), warehouse, retry=FAST).chat("vis", "hi")
    assert not r.ok and r.attempts == 4 and not r.transient and not r.fatal and "not JSON" in r.error


def test_audio_goes_only_to_models_that_accept_it(server, warehouse):
    audio = np.sin(np.linspace(0, 200, 8000)).astype(np.float32) * 0.3
    reg = parse_registry({"models": {
        "hears": {"model_id": "a", "base_url": server.base_url, "accepts_audio": True},
        "deaf": {"model_id": "b", "base_url": server.base_url},
    }}, environ={})
    client = MllmClient(reg, warehouse, retry=FAST)
    client.chat("hears", "what is said?", audio=audio, audio_rate=16000)
    client.chat("deaf", "what is said?", audio=audio, audio_rate=16000)
    with wave.open(io.BytesIO(server.requests[0].audio[0])) as w:
        assert w.getframerate() == 16000 and w.getnframes() == 8000
    assert server.requests[1].audio == []


def test_chat_many_keeps_order_and_respects_the_per_model_limit(warehouse):
    with FakeOpenAIServer(latency_s=0.1, responder=lambda req: f"echo {req.prompt}") as server:
        client = MllmClient(registry_for(server, max_concurrency=3), warehouse, retry=FAST)
        reqs = [ChatRequest("vis", f"q{i}") for i in range(9)] + [ChatRequest("vis", "q0")]
        results = client.chat_many(reqs)
        assert [r.text for r in results] == [f"echo q{i}" for i in range(9)] + ["echo q0"]
        assert server.max_in_flight == 3
        assert server.request_count == 9  # the duplicate waited for the first and came from the cache
        assert results[-1].cached
        assert warehouse.count(MODEL_CALLS) == 9  # every row committed when chat_many returns


def test_without_a_warehouse_nothing_is_cached(server):
    client = MllmClient(registry_for(server), None, retry=FAST)
    client.chat("vis", "x")
    client.chat("vis", "x")
    assert server.request_count == 2


def test_backoff_honours_retry_after():
    policy = RetryPolicy(base_s=0.01, cap_s=30)
    assert policy.delay(1, retry_after=2.0) >= 2.0
    assert all(0.005 <= policy.delay(1, None) <= 0.015 for _ in range(20))
    assert RetryPolicy(base_s=1, cap_s=5).delay(10, None) <= 5


def test_a_failure_never_overwrites_a_success_written_by_another_process(warehouse):
    from hvbench_assets.core.mllm import CallLog

    stale_view = CallLog(warehouse)
    stale_view.lookup("x")  # loads its index before the other process answers
    CallLog(warehouse).record({"id": "abc", "model": "m", "text": "answer", "error": None})
    stale_view.record({"id": "abc", "model": "m", "text": None, "error": "HTTP 503"})
    stale_view.record({"id": "def", "model": "m", "text": None, "error": "HTTP 503"})
    rows = {r["id"]: r for r in warehouse.query("SELECT id, text, error FROM model_calls")}
    assert rows["abc"]["text"] == "answer" and rows["abc"]["error"] is None
    assert rows["def"]["error"] == "HTTP 503"
