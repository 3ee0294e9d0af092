"""One client for every MLLM/LLM call: frames, concurrency, retries, cache, call log.

    client = MllmClient(registry, CallLog(warehouse))  # registry: settings_table.model_registry() or parse_registry
    r = client.chat("qwen25_vl", "Describe the person.", frames=sample_frames(clip, n_frames=8))
    r.text, r.call_id, r.cached, r.error

`chat` never raises for a failed call: the result carries `error` (and `transient` when retrying
later may help, `fatal` when a setting is wrong) and the failure is logged. After a fatal failure
(401, no such endpoint, missing weights) later calls to that model fail at once without a request.
It raises ModelNotConfigured for an unusable model name. Every text that came back from an
endpoint passes through `secrets.scrub` before it is returned, stored or logged.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hvbench_assets.core.mllm.backends import (
    CallError,
    ChatBackend,
    OpenAIBackend,
    Payload,
    Reply,
    build_messages,
)
from hvbench_assets.core.mllm.calls import CallLog
from hvbench_assets.core.mllm.frames import cap_frames, encode_jpeg, encode_wav
from hvbench_assets.core.mllm.registry import ModelRegistry, ModelSpec
from hvbench_assets.core.mllm.secrets import clip, configured_secrets, scrub
from hvbench_assets.core.warehouse import Warehouse


@dataclass(frozen=True)
class ChatResult:
    text: str | None  # None when the call failed
    call_id: str  # model_calls.id
    model: str  # registry name
    prompt_hash: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    cached: bool = False
    error: str | None = None
    transient: bool = False  # the error was a 429/5xx/timeout that outlasted the retries
    fatal: bool = False  # authentication / configuration: the error names the setting to fix
    attempts: int = 0  # requests sent for this result (0 when cached)
    frames_sent: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class ChatRequest:
    """One item for `chat_many`; same fields as `chat`'s arguments."""

    model: str
    prompt: str
    frames: Sequence[np.ndarray] = ()
    system: str | None = None
    audio: np.ndarray | None = None
    params: dict | None = None
    context: dict | None = None
    audio_rate: int = 16000


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    base_s: float = 1.0  # first backoff; doubles per attempt, with +-50 % jitter
    cap_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        d = min(self.cap_s, self.base_s * 2 ** (attempt - 1)) * (0.5 + random.random())
        return min(self.cap_s, max(d, retry_after or 0.0))


def prompt_hash(prompt: str, system: str | None = None) -> str:
    return hashlib.sha256(f"{system or ''}\x00{prompt}".encode()).hexdigest()[:16]


# Per-process, per-model limits shared by every client in the process.
_SEMAPHORES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()


def _semaphore(name: str, limit: int) -> threading.BoundedSemaphore:
    with _SEM_LOCK:
        return _SEMAPHORES.setdefault((name, limit), threading.BoundedSemaphore(max(1, limit)))


class MllmClient:
    def __init__(
        self,
        registry: ModelRegistry,
        cache: CallLog | Warehouse | None = None,
        max_concurrency: int | None = None,
        retry: RetryPolicy | None = None,
        backends: dict[str, ChatBackend] | None = None,
    ):
        self.registry = registry
        self.calls = CallLog(cache) if isinstance(cache, Warehouse) else cache
        self.max_concurrency = max_concurrency  # overrides every model's own limit when set
        self.retry = retry or RetryPolicy()
        self._backends: dict[str, ChatBackend] = dict(backends or {})
        self._backend_lock = threading.Lock()
        self._inflight: dict[str, threading.Lock] = {}
        self._inflight_lock = threading.Lock()
        self.requests_sent = 0  # HTTP requests (or local generations) by this client
        self._fatal: dict[str, str] = {}  # model -> first configuration error: later calls fail without a request

    # -- public ------------------------------------------------------------------------------
    def chat(
        self,
        model: str,
        prompt: str,
        frames: Sequence[np.ndarray] = (),
        system: str | None = None,
        audio: np.ndarray | None = None,
        params: dict | None = None,
        context: dict | None = None,
        audio_rate: int = 16000,
        commit: bool = True,
    ) -> ChatResult:
        """One call; its model_calls row is committed when this returns (`commit=False`: queued for the
        writer thread; `flush()` or process exit commits it)."""
        return self._chat(ChatRequest(model, prompt, frames, system, audio, params, context, audio_rate), wait=commit)

    def warm_up(self, model: str) -> None:
        """Do the first call's fixed costs now (backend import and connection pool, the cache index), e.g.
        in a thread while the caller prepares its requests. Best effort: a failure here shows up again, with
        its proper message, on the first real call."""
        try:
            spec = self.registry.get(model)
            backend = self._backend(spec)
            if hasattr(backend, "_client") and spec.backend == "openai":
                backend._client(spec)
            if self.calls:
                self.calls.lookup("")
        except Exception:  # noqa: BLE001 - see docstring
            return

    def flush(self) -> None:
        """Commit every queued model_calls row."""
        if self.calls:
            self.calls.flush()

    def secrets(self) -> frozenset[str]:
        """Every key configured for any model (read now: keys live in the environment)."""
        return configured_secrets((m.api_key_env for m in self.registry.models.values()), self.registry.keys)

    def _chat(self, req: ChatRequest, wait: bool) -> ChatResult:
        model, prompt, frames, system, audio = req.model, req.prompt, req.frames, req.system, req.audio
        params, context, audio_rate = req.params, req.context, req.audio_rate
        spec = self.registry.get(model)
        sent = cap_frames(frames, spec.max_frames)
        jpegs = tuple(encode_jpeg(f, spec.jpeg_quality, spec.max_side) for f in sent)
        wav = encode_wav(audio, audio_rate) if audio is not None and spec.accepts_audio else None
        payload = Payload(system=system, prompt=prompt, jpegs=jpegs, wav=wav, params=spec.request_params(params))
        request = build_messages(payload, wire=False)
        call_id = _call_id(spec, request, payload.params)
        p_hash = prompt_hash(prompt, system)
        inputs = {
            "frames_given": len(frames), "frames_sent": len(jpegs), "frame_sha256": [_sha(j) for j in jpegs],
            "audio_given": audio is not None, "audio_sent": wav is not None,
            "audio_s": round(len(audio) / audio_rate, 3) if audio is not None else None,
            **(context or {}),
        }
        with self._inflight_for(call_id):  # identical concurrent requests: one goes out
            hit = self.calls.lookup(call_id) if self.calls else None
            if hit is not None:
                return ChatResult(
                    text=hit["text"], call_id=call_id, model=model, prompt_hash=p_hash, tokens_in=hit["tokens_in"],
                    tokens_out=hit["tokens_out"], latency_s=hit["latency_s"], cached=True, frames_sent=len(jpegs),
                )
            result, row = self._call(spec, payload, call_id, p_hash)
        if self.calls:
            self.calls.record(scrub({
                **row, "id": call_id, "model": model, "model_id": spec.model_id, "backend": spec.backend,
                "endpoint": spec.endpoint, "prompt_hash": p_hash, "prompt": prompt,
                "system": system, "params": payload.params, "inputs": inputs, "request": request,
            }, self.secrets()), wait=wait)
        return result

    def chat_many(self, requests: Sequence[ChatRequest | dict], max_workers: int | None = None) -> list[ChatResult]:
        """Results in request order. The per-model semaphores bound requests in flight; the pool has
        twice that many threads so frame encoding and call logging overlap with waiting requests."""
        reqs = [r if isinstance(r, ChatRequest) else ChatRequest(**r) for r in requests]
        if not reqs:
            return []
        workers = max_workers or 2 * sum(self._limit(self.registry.get(m)) for m in {r.model for r in reqs})
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(reqs))), thread_name_prefix="mllm") as pool:
            futures = [pool.submit(self._chat, r, False) for r in reqs]
            results = [f.result() for f in futures]
        if self.calls:
            self.calls.flush()  # every row committed before returning
        return results

    def call_id_for(self, model: str, prompt: str, frames: Sequence[np.ndarray] = (), system: str | None = None,
                    params: dict | None = None) -> str:
        """The cache id `chat` would use (audio-less), without calling."""
        spec = self.registry.get(model)
        jpegs = tuple(encode_jpeg(f, spec.jpeg_quality, spec.max_side) for f in cap_frames(frames, spec.max_frames))
        payload = Payload(system=system, prompt=prompt, jpegs=jpegs, params=spec.request_params(params))
        return _call_id(spec, build_messages(payload, wire=False), payload.params)

    # -- internals ---------------------------------------------------------------------------
    def _limit(self, spec: ModelSpec) -> int:
        return max(1, self.max_concurrency or spec.max_concurrency)

    def _call(self, spec: ModelSpec, payload: Payload, call_id: str, p_hash: str) -> tuple[ChatResult, dict]:
        secrets = self.secrets()
        if spec.name in self._fatal:  # a wrong setting does not fix itself between two items
            error = self._fatal[spec.name]
            return (ChatResult(text=None, call_id=call_id, model=spec.name, prompt_hash=p_hash, error=error, fatal=True),
                    {"text": None, "tokens_in": None, "tokens_out": None, "latency_s": 0.0, "attempts": 0,
                     "error": error, "response": {"error": error, "fatal": True}})
        backend = self._backend(spec)
        sem = _semaphore(spec.name, self._limit(spec))
        started = time.monotonic()
        last: CallError | None = None
        attempt = 0
        for attempt in range(1, self.retry.max_attempts + 1):
            with sem:
                t0 = time.monotonic()
                with self._inflight_lock:
                    self.requests_sent += 1
                try:
                    reply: Reply = backend.complete(spec, payload)
                except CallError as exc:
                    last = exc
                else:
                    latency = time.monotonic() - t0
                    text = scrub(reply.text, secrets)
                    result = ChatResult(
                        text=text, call_id=call_id, model=spec.name, prompt_hash=p_hash, tokens_in=reply.tokens_in,
                        tokens_out=reply.tokens_out, latency_s=latency, attempts=attempt, frames_sent=len(payload.jpegs),
                    )
                    return result, {"text": text, "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out,
                                    "latency_s": latency, "attempts": attempt, "error": None,
                                    "response": scrub(reply.raw, secrets)}
            if not last.retryable or attempt == self.retry.max_attempts:
                break
            time.sleep(self.retry.delay(attempt, getattr(last, "retry_after", None)))
        where = spec.endpoint or spec.backend
        verb = f"gave up after {attempt} attempts" if last.retryable else f"failed on attempt {attempt}"
        detail = scrub(str(last), secrets)
        error = clip(f"model {spec.name} ({spec.model_id}) at {where}: {verb}: {detail}", 1200)
        if last.fatal:
            self._fatal.setdefault(spec.name, error)
        latency = time.monotonic() - started
        result = ChatResult(text=None, call_id=call_id, model=spec.name, prompt_hash=p_hash, latency_s=latency,
                            error=error, transient=last.transient, fatal=last.fatal, attempts=attempt,
                            frames_sent=len(payload.jpegs))
        return result, {"text": None, "tokens_in": None, "tokens_out": None, "latency_s": latency, "attempts": attempt,
                        "error": error, "response": {"error": detail, "transient": last.transient, "fatal": last.fatal}}

    def _backend(self, spec: ModelSpec) -> ChatBackend:
        with self._backend_lock:
            if spec.backend not in self._backends:
                if spec.backend == "transformers":
                    from hvbench_assets.core.mllm.local import TransformersBackend

                    self._backends["transformers"] = TransformersBackend()
                else:
                    self._backends["openai"] = OpenAIBackend()
            return self._backends[spec.backend]

    def _inflight_for(self, call_id: str) -> threading.Lock:
        with self._inflight_lock:
            return self._inflight.setdefault(call_id, threading.Lock())


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _call_id(spec: ModelSpec, request: list[dict], params: dict) -> str:
    canonical = json.dumps({"backend": spec.backend, "model_id": spec.model_id, "messages": request, "params": params},
                           sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()
