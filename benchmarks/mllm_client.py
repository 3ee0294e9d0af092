"""MllmClient throughput: N requests at server latency L with concurrency C, against the ideal N*L/C.

Runs a real OpenAI-compatible HTTP server on 127.0.0.1 (the test helper, in its own process)
that answers every request after L seconds, sends N distinct requests (each with F small frames) through MllmClient
(plain HTTP over httpx), then repeats them: the rerun must send zero requests (warehouse cache).

    .venv/bin/python benchmarks/mllm_client.py --n 64 --latency 0.25 --concurrency 8 --frames 4
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvbench_assets.core.mllm import ChatRequest, MllmClient, parse_registry  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402
from hvbench_assets.testkit.fake_openai_server import serve_forever  # noqa: E402


class ServerProcess:
    """The fake server in its own process, so its JSON/base64 work does not share our GIL."""

    def __init__(self, latency: float):
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        self.proc = ctx.Process(target=serve_forever, args=(latency, queue), daemon=True)
        self.proc.start()
        self.base_url = queue.get(timeout=60)

    def stats(self) -> dict:
        with urllib.request.urlopen(self.base_url + "/_stats") as r:
            return json.loads(r.read())

    @property
    def request_count(self) -> int:
        return self.stats()["requests"]

    @property
    def max_in_flight(self) -> int:
        return self.stats()["max_in_flight"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.join(10)


def frames_for(n_frames: int) -> list[np.ndarray]:
    """Smooth frames (JPEG sizes like real video, unlike noise)."""
    yy, xx = np.mgrid[0:360, 0:480]
    return [np.stack([(xx + 7 * i) % 256, (yy + 3 * i) % 256, np.full_like(xx, 40 * i % 256)], -1).astype(np.uint8)
            for i in range(n_frames)]


def run(n: int, latency: float, concurrency: int, n_frames: int, use_warehouse: bool, tmp: Path, tag: str) -> None:
    frames = frames_for(n_frames)
    with ServerProcess(latency) as server:
        reg = parse_registry({"models": {"bench": {"model_id": "bench-vl", "base_url": server.base_url,
                                                   "max_concurrency": concurrency, "max_frames": n_frames}}}, environ={})
        wh = Warehouse(tmp / f"{tag}.duckdb") if use_warehouse else None
        reqs = [ChatRequest("bench", f"question {i}: what happens?", frames=frames) for i in range(n)]
        client = MllmClient(reg, wh)
        t0 = time.perf_counter()
        results = client.chat_many(reqs)
        first = time.perf_counter() - t0
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
        ideal = n * latency / concurrency
        print(f"[{tag}] first run : {n} requests, latency {latency:.3f}s, concurrency {concurrency}, {n_frames} frames/request")
        print(f"[{tag}]   achieved {first:.2f}s  ideal N*L/C {ideal:.2f}s  ratio {first / ideal:.2f}x  "
              f"(server saw {server.request_count} requests, at most {server.max_in_flight} at once)")
        before = server.request_count
        t0 = time.perf_counter()
        again = MllmClient(reg, wh).chat_many(reqs)
        rerun = time.perf_counter() - t0
        print(f"[{tag}] rerun     : {server.request_count - before} requests sent, {sum(r.cached for r in again)}/{n} "
              f"from cache, {rerun:.2f}s ({rerun / first:.2f}x of the first run)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--frames", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(args.n, args.latency, args.concurrency, args.frames, True, Path(tmp), "warehouse cache")
        run(args.n, args.latency, args.concurrency, args.frames, False, Path(tmp), "no cache (baseline)")


if __name__ == "__main__":
    main()
