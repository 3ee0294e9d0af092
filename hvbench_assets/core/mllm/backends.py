"""What actually answers a request: an OpenAI-compatible endpoint, or local weights (local.py).

Backends get a `Payload` (system, prompt, JPEG frames, optional WAV, params) and return a `Reply`
or raise `TransientCallError` (worth retrying: 429, 5xx, timeouts, connection or malformed
replies) / `CallError` (retrying cannot help: 4xx, empty reply). The client owns retries,
concurrency and the cache, so every backend behaves the same under faults.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from hvbench_assets.core.mllm.registry import ModelSpec


class CallError(RuntimeError):
    """A call that failed for good."""

    transient = False


class TransientCallError(CallError):
    """A call that may succeed when repeated later."""

    transient = True

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


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


_KEYISH = re.compile(r"(sk-|AIza)[A-Za-z0-9_\-\*\.]{4,}")


def scrub(text: str, secret: str | None) -> str:
    """Error text without the key (some APIs echo a masked key back)."""
    if secret and len(secret) > 3 and secret != "EMPTY":
        text = text.replace(secret, "***")
    return _KEYISH.sub("***", text)


def extract_text(body: Any) -> tuple[str, int | None, int | None]:
    """Text and token counts of a chat completion body; CallError/TransientCallError otherwise."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        raise TransientCallError(f"malformed reply: no choices list in {str(body)[:200]!r}")
    if not body["choices"]:
        raise CallError("empty reply: the choices list is empty")
    message = (body["choices"][0] or {}).get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        raise TransientCallError(f"malformed reply: message content is {type(content).__name__}")
    if not content or not content.strip():
        reason = (body["choices"][0] or {}).get("finish_reason")
        raise CallError(f"empty reply (finish_reason={reason!r})")
    usage = body.get("usage") or {}
    return content.strip(), usage.get("prompt_tokens"), usage.get("completion_tokens")


class OpenAIBackend:
    """Any /v1/chat/completions endpoint through the `openai` package (its own retries off)."""

    def __init__(self) -> None:
        self._clients: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def _client(self, spec: ModelSpec):
        import openai

        key = (spec.base_url, spec.api_key_env, spec.timeout_s)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = openai.OpenAI(
                    base_url=spec.base_url, api_key=spec.api_key(), max_retries=0, timeout=spec.timeout_s
                )
            return self._clients[key]

    def complete(self, spec: ModelSpec, payload: Payload) -> Reply:
        import openai

        client = self._client(spec)
        secret = client.api_key
        try:
            raw = client.chat.completions.with_raw_response.create(
                model=spec.model_id,
                messages=build_messages(payload),
                extra_body=dict(payload.params) or None,
            )
            body_text = raw.http_response.text
        except openai.APITimeoutError as exc:
            raise TransientCallError(f"timeout after {spec.timeout_s:.0f}s") from exc
        except openai.APIConnectionError as exc:
            raise TransientCallError(scrub(f"connection error: {exc}", secret)) from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = scrub(f"HTTP {status}: {exc.response.text[:300]}", secret)
            if status in (408, 409, 429) or status >= 500:
                raise TransientCallError(detail, _retry_after(exc.response.headers)) from exc
            raise CallError(detail) from exc
        except openai.OpenAIError as exc:  # anything else the library raises is a failed call, not a crash
            raise CallError(scrub(f"{type(exc).__name__}: {exc}", secret)) from exc
        try:
            body = json.loads(body_text)
        except ValueError as exc:
            raise TransientCallError(f"malformed reply: not JSON: {body_text[:200]!r}") from exc
        text, tokens_in, tokens_out = extract_text(body)
        return Reply(text=text, tokens_in=tokens_in, tokens_out=tokens_out, raw=body)


def _retry_after(headers) -> float | None:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
