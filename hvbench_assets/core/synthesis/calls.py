"""The models of one synthesis run and the calls to them, through the shared client (cached, logged).

The writer (the describer) writes captions, questions and perturbations; every answering model answers
and scores. Frames of a question video are sampled once per (video, frame count) and reused: every video
prompt of the chain asks for the same count, so a question decodes its video once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.mllm.client import ChatRequest, ChatResult, MllmClient
from hvbench_assets.core.mllm.frames import sample_frames
from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.mllm.registry import ModelSpec
from hvbench_assets.core.mllm.backends import ModelUnreachable

@dataclass
class CallStats:
    made: int = 0  # calls answered by an endpoint
    cached: int = 0  # calls answered from model_calls
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, r: ChatResult) -> None:
        if r.cached:
            self.cached += 1
        elif r.ok:
            self.made += 1
        else:
            self.failed += 1
        if not r.cached:
            self.tokens_in += r.tokens_in or 0
            self.tokens_out += r.tokens_out or 0

    def as_dict(self) -> dict:
        return dict(vars(self))


@dataclass
class SynthesisModels:
    client: MllmClient
    writer: ModelSpec
    answerers: Sequence[ModelSpec]
    video_id: str
    task: str
    stats: CallStats = field(default_factory=CallStats)
    _frames: dict = field(default_factory=dict)

    @property
    def weights(self) -> dict[str, float]:
        return {m.name: float(m.weight) for m in self.answerers}

    def _request(self, spec: ModelSpec, prompt: Prompt, video: Path | None, fields: dict) -> ChatRequest:
        frames = ()
        if video is not None and prompt.n_frames:
            # one decode per video for every model: sampled at the largest side any of them takes, each
            # request shrinks to its model's max_side when encoding
            key = (str(video), prompt.n_frames, prompt.fps)
            if key not in self._frames:
                side = max(m.max_side for m in (self.writer, *self.answerers))
                self._frames[key] = sample_frames(video, n_frames=prompt.n_frames, fps=prompt.fps, max_side=side)
            frames = self._frames[key]
        return ChatRequest(spec.name, prompt.user.format(**fields), frames=frames, system=prompt.system,
                           params=prompt.params, context={"video_id": self.video_id, "task": self.task,
                                                          "prompt": prompt.name, "clip": to_stored(video)})

    def _checked(self, results: list[ChatResult]) -> list[ChatResult]:
        for r in results:
            self.stats.add(r)
            if r.transient:
                raise ModelUnreachable(f"{self.task} of {self.video_id}: {r.error}")
        return results

    def write(self, prompt: Prompt, video: Path | None = None, **fields) -> ChatResult:
        """One call to the writer; its model_calls row is queued (`flush` commits it with the others)."""
        req = self._request(self.writer, prompt, video, fields)
        return self._checked([self.client.chat(req.model, req.prompt, frames=req.frames, system=req.system,
                                               params=req.params, context=req.context, commit=False)])[0]

    def flush(self) -> None:
        """Commit every queued model_calls row (before a question naming them is stored)."""
        self.client.flush()

    def each(self, prompt: Prompt, video: Path | None = None, **fields) -> list[ChatResult]:
        """The same prompt to every answering model, concurrently; results in registry order."""
        reqs = [self._request(m, prompt, video, fields) for m in self.answerers]
        return self._checked(self.client.chat_many(reqs))


def ensemble_fingerprint(answerers: Sequence[ModelSpec], min_answerers: int) -> str:
    """What about the ensemble changes a question: which models answer and their weights (not where they
    are served). A weight change makes the six tasks stale; the rerun re-ranks from cached scores."""
    keep = [[m.model_id, m.max_frames, m.max_side, float(m.weight)] for m in answerers]
    return hashlib.sha256(json.dumps([keep, min_answerers]).encode()).hexdigest()[:8]


def too_few_answerers(answerers: Sequence[ModelSpec], min_answerers: int, source: str) -> str | None:
    """The blocked reason when the ensemble is smaller than the configured minimum, naming the settings."""
    if len(answerers) >= min_answerers:
        return None
    names = ", ".join(m.name for m in answerers) or "none"
    return (f"the synthesis needs at least {min_answerers} answering models; {len(answerers)} configured ({names}). "
            f"Configure more entries of {source or 'config/models.toml'} (base_url + their key variable) or list them "
            f"in HVBENCH_MLLM_MODELS, or lower min_answerers (HVBENCH_MIN_ANSWERERS)")
