"""Model calls of the task builds: one prompt, optional frames from a (marked) video, through the shared
client, so every call is cached and logged in `model_calls`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.mllm.backends import ModelUnreachable
from hvbench_assets.core.mllm.client import ChatResult, MllmClient
from hvbench_assets.core.mllm.frames import sample_frames
from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.mllm.registry import ModelSpec


def asker(client: MllmClient, spec: ModelSpec, video_id: str, task: str) -> Callable[..., ChatResult]:
    def ask(prompt: Prompt, video: Path | None = None, **fields) -> ChatResult:
        frames = ()
        if video is not None and prompt.n_frames:
            frames = sample_frames(video, n_frames=prompt.n_frames, fps=prompt.fps, max_side=spec.max_side)
        result = client.chat(spec.name, prompt.user.format(**fields), frames=frames, system=prompt.system,
                             params=prompt.params, context={"video_id": video_id, "task": task, "prompt": prompt.name,
                                                            "clip": to_stored(video)})
        if result.transient:
            raise ModelUnreachable(f"{task} of {video_id}: {result.error}")
        return result

    return ask
