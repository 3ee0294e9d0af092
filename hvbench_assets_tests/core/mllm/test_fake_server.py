"""The reusable fake OpenAI-compatible server: scripted replies, auth, request records, stats."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply


def post(url: str, body: dict, key: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_scripted_replies_come_first_then_the_responder():
    with FakeOpenAIServer(responder=lambda req: f"echo {req.prompt}") as server:
        server.script("first", FakeReply.rate_limited(retry_after=2))
        msg = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        status, body = post(server.base_url, msg)
        assert status == 200 and json.loads(body)["choices"][0]["message"]["content"] == "first"
        assert post(server.base_url, msg)[0] == 429
        status, body = post(server.base_url, msg)
        assert json.loads(body)["choices"][0]["message"]["content"] == "echo hi"
        assert server.request_count == 3 and server.requests[0].prompt == "hi"
        with urllib.request.urlopen(server.base_url + "/_stats") as r:
            assert json.loads(r.read()) == {"requests": 3, "max_in_flight": 1}
        server.reset()
        assert server.request_count == 0


def test_api_key_is_enforced_and_faults_look_like_the_real_thing():
    with FakeOpenAIServer(api_key="k1") as server:
        msg = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}
        assert post(server.base_url, msg)[0] == 401
        assert post(server.base_url, msg, key="k1")[0] == 200
        server.script(FakeReply.malformed(), FakeReply.empty(), FakeReply.server_error(503))
        assert post(server.base_url, msg, key="k1")[1].startswith("<html>")
        assert json.loads(post(server.base_url, msg, key="k1")[1])["choices"][0]["message"]["content"] == ""
        assert post(server.base_url, msg, key="k1")[0] == 503
        assert server.requests[1].headers["authorization"] == "Bearer k1"


def test_a_hang_outlasts_a_client_timeout():
    with FakeOpenAIServer() as server:
        server.script(FakeReply.hang(1.0))
        msg = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        req = urllib.request.Request(server.base_url + "/chat/completions", data=json.dumps(msg).encode(), method="POST")
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            urllib.request.urlopen(req, timeout=0.2)
