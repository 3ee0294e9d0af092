"""What actually answers a request: an OpenAI-compatible endpoint, or local weights (local.py).

Backends get a `Payload` (system, prompt, JPEG frames, optional WAV, params) and return a `Reply`
or raise a `CallError` whose class says what helps (see CallError). The client owns retries,
concurrency, the cache and the scrubbing of keys, so every backend behaves the same under faults.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from urllib.parse import urlsplit, urlunsplit
from dataclasses import dataclass, field
from typing import Any, Protocol

from hvbench_assets.core.mllm.registry import ModelSpec


class CallError(RuntimeError):
    """A call that failed. The class says what helps:

    transient  a later rerun may succeed (endpoint down, rate limited, timeouts): the step fails and reruns
    retryable  worth repeating at once with backoff (transient faults, a garbled body)
    fatal      configuration or authentication: nothing works until a setting changes; stop at once
    A plain CallError (refusal, empty reply, bad request) is this item's answer: a `failed` row.
    """

    transient = False
    retryable = False
    fatal = False


class TransientCallError(CallError):
    """A call that may succeed when repeated later."""

    transient = True
    retryable = True

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class MalformedReply(CallError):
    """The endpoint answered, but not with a chat completion: asked again, then a failed item."""

    retryable = True


class ConfigCallError(CallError):
    """Authentication or configuration is wrong (401/403, no such route or model): the message names
    the setting to fix."""

    fatal = True


class ModelUnreachable(RuntimeError):
    """429 / 5xx / timeouts outlasted the client's retries: rerun the partition later (finished calls are cached).
    Raised by the stages' askers (core/tasks/calls.py, core/vision/realness.py) and caught by their assets."""


@dataclass(frozen=True)
class Payload:
    system: str | None
    prompt: str
    jpegs: tuple[bytes, ...] = ()
    wav: bytes | None = None
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    text: str
    tokens_in: int | None
    tokens_out: int | None
    raw: Any  # the response body as received (parsed JSON when it parsed)


class ChatBackend(Protocol):
    def complete(self, spec: ModelSpec, payload: Payload) -> Reply: ...


def build_messages(payload: Payload, wire: bool = True) -> list[dict]:
    """OpenAI chat messages: optional system, then one user turn of frames, audio, text.
    `wire=False` renders media as {sha256, bytes} for the call log and the cache key."""
    content: list[dict] = [_image_part(j, wire) for j in payload.jpegs]
    if payload.wav is not None:
        data = _b64(payload.wav) if wire else {"sha256": _sha(payload.wav), "bytes": len(payload.wav)}
        content.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
    content.append({"type": "text", "text": payload.prompt})
    messages = [{"role": "system", "content": payload.system}] if payload.system else []
    return messages + [{"role": "user", "content": content}]


def _image_part(jpeg: bytes, wire: bool) -> dict:
    if wire:
        return {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + _b64(jpeg)}}
    return {"type": "image_url", "image_url": {"sha256": _sha(jpeg), "bytes": len(jpeg)}}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def extract_text(body: Any) -> tuple[str, int | None, int | None]:
    """Text and token counts of a chat completion body; CallError/TransientCallError otherwise."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        raise MalformedReply(f"malformed reply: no choices list in {str(body)[:2000]!r}")
    if not body["choices"]:
        raise CallError("empty reply: the choices list is empty")
    message = (body["choices"][0] or {}).get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        raise MalformedReply(f"malformed reply: message content is {type(content).__name__}")
    if not content or not content.strip():
        reason = (body["choices"][0] or {}).get("finish_reason")
        raise CallError(f"empty reply (finish_reason={reason!r})")
    usage = body.get("usage") or {}
    return content.strip(), usage.get("prompt_tokens"), usage.get("completion_tokens")


class OpenAIBackend:
    """Any /v1/chat/completions endpoint, spoken directly over httpx (pooled keep-alive connections,
    proxy variables honoured). The protocol is one POST; the `openai` SDK cost ~1 s of imports per
    process for it. Error texts may hold whatever the server sent: the client scrubs keys from them."""

    def __init__(self) -> None:
        self._clients: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def _client(self, spec: ModelSpec):
        import httpx

        key = (spec.base_url, spec.timeout_s)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = httpx.Client(
                    timeout=httpx.Timeout(spec.timeout_s), trust_env=True,
                    limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
                )
            return self._clients[key]

    def complete(self, spec: ModelSpec, payload: Payload) -> Reply:
        import httpx

        client = self._client(spec)
        key = spec.api_key()
        headers = {"Content-Type": "application/json"}
        if key != "EMPTY":
            headers["Authorization"] = f"Bearer {key}"
        body = {**dict(payload.params), "model": spec.model_id, "messages": build_messages(payload)}
        try:
            resp = client.post(chat_url(spec.base_url), content=json.dumps(body, ensure_ascii=False), headers=headers)
            body_text = resp.text
        except httpx.TimeoutException as exc:
            raise TransientCallError(f"timeout after {spec.timeout_s:.0f}s") from exc
        except httpx.TransportError as exc:
            raise TransientCallError(f"connection error: {type(exc).__name__}: {exc}") from exc
        except httpx.HTTPError as exc:  # anything else httpx raises is a failed call, not a crash
            raise CallError(f"{type(exc).__name__}: {exc}") from exc
        status = resp.status_code
        if status >= 400:
            detail = f"HTTP {status}: {body_text[:2000]}"
            if status in (408, 409, 429) or status >= 500:
                raise TransientCallError(detail, _retry_after(resp.headers))
            if status in (401, 403):
                raise ConfigCallError(f"{detail} -- {auth_hint(spec)}")
            if status == 404:
                raise ConfigCallError(f"{detail} -- {route_hint(spec)}")
            raise CallError(detail)
        try:
            parsed = json.loads(body_text)
        except ValueError:
            raise MalformedReply(f"malformed reply: HTTP {status} body is not JSON: {body_text[:2000]!r}") from None
        text, tokens_in, tokens_out = extract_text(parsed)
        return Reply(text=text, tokens_in=tokens_in, tokens_out=tokens_out, raw=parsed)


def chat_url(base_url: str) -> str:
    """<base_url>/chat/completions, keeping a query string some gateways need."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def auth_hint(spec: ModelSpec) -> str:
    if spec.api_key_env:
        return (f"authentication failed for model {spec.name}: put a valid key in {spec.api_key_env} "
                f"(or name another variable in {spec.env_prefix}_API_KEY_ENV)")
    return (f"the endpoint of model {spec.name} wants a key: set {spec.env_prefix}_API_KEY_ENV to the name of the "
            "variable holding it (or api_key_env in its registry entry)")


def route_hint(spec: ModelSpec) -> str:
    return (f"no chat endpoint or model here for model {spec.name}: check {spec.env_prefix}_BASE_URL "
            f"(now {spec.endpoint}, it should end in /v1) and {spec.env_prefix}_MODEL (now {spec.model_id!r})")


def _retry_after(headers) -> float | None:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
