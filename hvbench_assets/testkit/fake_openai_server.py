"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat API, for tests and benchmarks.

It stands in for vLLM / OpenAI / Gemini at the network boundary only: the code under test speaks
real HTTP to it. Reuse it anywhere:

    from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply

    with FakeOpenAIServer(latency_s=0.05) as server:          # server.base_url -> http://127.0.0.1:PORT/v1
        server.script(FakeReply.rate_limited(), FakeReply.server_error())  # next two requests fail
        server.responder = lambda req: FakeReply(text="B")    # then every request answers "B"
        ...
        server.requests[-1].prompt, server.requests[-1].images  # what the client sent

Replies come first from the scripted queue, then from `responder(request) -> FakeReply | str`
(default: a deterministic text naming the model, frame count and prompt start). Faults:
`FakeReply.rate_limited(retry_after)` 429, `.server_error(status)` 5xx, `.hang(seconds)` (a reply
slower than the client's timeout), `.malformed()` (non-JSON body), `.empty()` (empty content),
`.no_choices()`, `.drop()` (connection closed without a reply), `.leaky(status, as_json)` (a body that
echoes the request's Authorization header, like a misbehaving proxy). `latency_s` delays every
reply. `api_key=` makes the server demand `Authorization: Bearer <key>` (401 otherwise).
Every request, including failed ones, is recorded in `server.requests` (thread-safe);
`max_in_flight` is the most chat requests the server held at once (to check concurrency limits);
`GET /_stats` returns both as JSON when the server runs in another process (see `serve_forever`).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeReply:
    text: str | None = None  # message content of a 200 reply
    status: int = 200
    delay_s: float = 0.0  # extra delay before replying
    body: bytes | None = None  # raw body, replaces the generated JSON (malformed replies)
    headers: dict = field(default_factory=dict)
    disconnect: bool = False  # close the socket without answering
    json_body: dict | None = None  # a custom JSON body
    echo_auth: bool = False  # put the request's Authorization header into `body` / `json_body` ({auth})

    @classmethod
    def rate_limited(cls, retry_after: float | None = None) -> FakeReply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=429, json_body={"error": {"message": "rate limited", "type": "rate_limit"}}, headers=headers)

    @classmethod
    def server_error(cls, status: int = 500) -> FakeReply:
        return cls(status=status, json_body={"error": {"message": "internal error", "type": "server_error"}})

    @classmethod
    def bad_request(cls, message: str = "bad request") -> FakeReply:
        return cls(status=400, json_body={"error": {"message": message, "type": "invalid_request_error"}})

    @classmethod
    def hang(cls, seconds: float, text: str = "too late") -> FakeReply:
        return cls(text=text, delay_s=seconds)

    @classmethod
    def malformed(cls) -> FakeReply:
        return cls(body=b"<html>502 upstream hiccup</html>", headers={"Content-Type": "application/json"})

    @classmethod
    def empty(cls) -> FakeReply:
        return cls(text="")

    @classmethod
    def no_choices(cls) -> FakeReply:
        return cls(json_body={"id": "x", "object": "chat.completion", "choices": []})

    @classmethod
    def drop(cls) -> FakeReply:
        return cls(disconnect=True)

    @classmethod
    def leaky(cls, status: int = 200, as_json: bool = False) -> FakeReply:
        """A reply whose body repeats the caller's `Authorization: Bearer <key>` header."""
        if as_json:
            return cls(status=status, json_body={"error": {"message": "token {auth} rejected"}}, echo_auth=True)
        return cls(status=status, body=b"<html>gateway says: forwarded {auth} upstream</html>", echo_auth=True)


@dataclass
class ReceivedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON (or the raw text when it did not parse)
    received_at: float

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    def _user_parts(self) -> list[dict]:
        parts: list[dict] = []
        for m in self.body.get("messages", []) if isinstance(self.body, dict) else []:
            if m.get("role") == "user":
                c = m.get("content")
                parts += c if isinstance(c, list) else [{"type": "text", "text": c}]
        return parts

    @property
    def prompt(self) -> str:
        return "\n".join(p["text"] for p in self._user_parts() if p.get("type") == "text")

    @property
    def system(self) -> str | None:
        for m in self.body.get("messages", []) if isinstance(self.body, dict) else []:
            if m.get("role") == "system":
                return m.get("content")
        return None

    @property
    def images(self) -> list[bytes]:
        """Decoded bytes of every image part (data: URLs)."""
        out = []
        for p in self._user_parts():
            if p.get("type") == "image_url":
                url = p["image_url"]["url"]
                out.append(base64.b64decode(url.split(",", 1)[1]) if url.startswith("data:") else url.encode())
        return out

    @property
    def audio(self) -> list[bytes]:
        return [base64.b64decode(p["input_audio"]["data"]) for p in self._user_parts() if p.get("type") == "input_audio"]


def default_responder(request: ReceivedRequest) -> FakeReply:
    return FakeReply(text=f"fake {request.model}: saw {len(request.images)} frames; prompt began {request.prompt[:48]!r}")


class FakeOpenAIServer:
    def __init__(self, responder: Callable[[ReceivedRequest], FakeReply | str] | None = None,
                 latency_s: float = 0.0, api_key: str | None = None):
        self.responder = responder or default_responder
        self.latency_s = latency_s
        self.api_key = api_key
        self.requests: list[ReceivedRequest] = []
        self._queue: deque[FakeReply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        self.max_in_flight = 0  # the most chat requests the server held at once

    # -- control -----------------------------------------------------------------------------
    def script(self, *replies: FakeReply | str) -> None:
        """Queue replies for the next requests (before the responder is used again)."""
        with self._lock:
            self._queue.extend(FakeReply(text=r) if isinstance(r, str) else r for r in replies)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.max_in_flight = 0

    @property
    def request_count(self) -> int:
        return len(self.requests)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/_stats"):  # for a server in another process
                    self._send(200, {"requests": server.request_count, "max_in_flight": server.max_in_flight})
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                req = ReceivedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                with server._lock:
                    server.requests.append(req)
                    scripted = server._queue.popleft() if server._queue else None
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._send(401, {"error": {"message": "invalid api key", "type": "auth"}})
                reply = scripted or server.responder(req)
                reply = FakeReply(text=reply) if isinstance(reply, str) else reply
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.latency_s + reply.delay_s)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                if reply.disconnect:
                    self.close_connection = True
                    return
                if reply.echo_auth:
                    auth = self.headers.get("Authorization", "")
                    if reply.body is not None:
                        reply = FakeReply(status=reply.status, headers=reply.headers,
                                          body=reply.body.replace(b"{auth}", auth.encode()))
                    else:
                        reply = FakeReply(status=reply.status, headers=reply.headers, json_body=json.loads(
                            json.dumps(reply.json_body).replace("{auth}", auth)))
                if reply.body is not None:
                    return self._send(reply.status, reply.body, reply.headers)
                if reply.json_body is not None:
                    return self._send(reply.status, reply.json_body, reply.headers)
                text = reply.text or ""
                payload = {
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": req.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": len(req.prompt.split()) + 10 * len(req.images),
                              "completion_tokens": len(text.split()),
                              "total_tokens": len(req.prompt.split()) + 10 * len(req.images) + len(text.split())},
                }
                self._send(reply.status, payload, reply.headers)

            def _send(self, status: int, body, headers: dict | None = None):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_forever(latency_s: float = 0.0, port_queue=None) -> None:
    """Run a server until the process is killed; puts its base URL on `port_queue`
    (a multiprocessing queue). Used by benchmarks so the server does not share the client's GIL."""
    server = FakeOpenAIServer(latency_s=latency_s).start()
    if port_queue is not None:
        port_queue.put(server.base_url)
    threading.Event().wait()
