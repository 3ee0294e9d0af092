from __future__ import annotations

import pytest

from hvbench_assets.core.mllm import MllmClient, RetryPolicy, parse_registry
from hvbench_assets.testkit.bench_factory import make_benchmark
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer


@pytest.fixture(scope="session")
def toy_bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench") / "toybench"
    return root, make_benchmark(root)


@pytest.fixture
def fake_server():
    with FakeOpenAIServer() as server:
        yield server


def make_client(server, cache=None, audio_models=("fake_av",)) -> MllmClient:
    names = ["fake_vl", "fake_av", "fake_text", "fake_refuser", "judge"]
    registry = parse_registry({"models": {
        n: {"model_id": n, "base_url": server.base_url, "max_frames": 16, "accepts_audio": n in audio_models,
            "max_concurrency": 4}
        for n in names}}, environ={})
    return MllmClient(registry, cache, retry=RetryPolicy(max_attempts=1, base_s=0.01))
