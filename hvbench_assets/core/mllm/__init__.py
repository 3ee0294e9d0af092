"""MLLM layer: one client for OpenAI-compatible endpoints and local weights, with a call log/cache.

Public API (stable; the evaluation and synthesis stages build on it):
    load_registry(path, environ, keys) -> ModelRegistry   a models file + the HVBENCH_MLLM_<NAME>_* overrides passed in
                                              (settings_table.model_registry() passes the environment)
    MllmClient(registry, cache, max_concurrency).chat(model, prompt, frames=(), system=None,
        audio=None, params=None, context=None) -> ChatResult
    MllmClient.chat_many([ChatRequest(...)]) -> list[ChatResult]
    sample_frames(path, n_frames=None, fps=None, max_side=768) -> list[BGR ndarray]
    MODEL_CALLS / CallLog                    the `model_calls` table (every call; the cache)
"""

from hvbench_assets.core.mllm.backends import CallError, ConfigCallError, MalformedReply, TransientCallError
from hvbench_assets.core.mllm.calls import MODEL_CALLS, CallLog
from hvbench_assets.core.mllm.client import (
    ChatRequest,
    ChatResult,
    MllmClient,
    RetryPolicy,
    prompt_hash,
)
from hvbench_assets.core.mllm.frames import cap_frames, encode_jpeg, sample_frames
from hvbench_assets.core.mllm.registry import (
    ModelNotConfigured,
    ModelRegistry,
    ModelSpec,
    load_registry,
    parse_registry,
)

__all__ = [
    "MODEL_CALLS", "CallError", "CallLog", "ConfigCallError", "MalformedReply", "ChatRequest", "ChatResult", "MllmClient", "ModelNotConfigured",
    "ModelRegistry", "ModelSpec", "RetryPolicy", "TransientCallError", "cap_frames", "encode_jpeg",
    "load_registry", "parse_registry", "prompt_hash", "sample_frames",
]
