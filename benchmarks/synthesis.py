"""Synthesis throughput: descriptive questions per minute at a given endpoint latency and concurrency,
against the ideal (calls per question x latency / concurrency), requests per question, and a rerun.

A real OpenAI-compatible server on 127.0.0.1 (the test helper, in its own process, scripted per model:
a writer and three answering models) answers every request after `--latency` seconds. N BTA questions
(each a different person description, so no two share a request) run through the real chain with
`--concurrency` questions at a time and the same limit per model in the client. Then the same N again:
every call must come from the cache (0 requests).

    .venv/bin/python benchmarks/synthesis.py --n 24 --latency 0.2 --concurrency 4
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvbench_assets.core.mllm import MODEL_CALLS, MllmClient, parse_registry  # noqa: E402
from hvbench_assets.core.render.questions import render_question_video  # noqa: E402
from hvbench_assets.core.synthesis.calls import SynthesisModels  # noqa: E402
from hvbench_assets.core.tasks.pipeline import run_family  # noqa: E402
from hvbench_assets.core.tasks.families import behavior_temporal_analysis as bta  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer  # noqa: E402
from hvbench_assets.testkit.labels_factory import clip_labels, full  # noqa: E402
from hvbench_assets.testkit.media_factory import moving_square_video  # noqa: E402
from hvbench_assets.testkit.scripted_synthesis import Script  # noqa: E402

CALLS_PER_QUESTION = 9  # caption, question, 3 answers, 3 score sheets, 1 perturbation
ROUNDS_PER_QUESTION = 5  # caption -> question -> answers (parallel) -> scores (parallel) -> perturbation


class _PerPerson(Script):
    """The scripted models, with a question that names the benchmark person, so no two questions share an
    answer or score request (a shared one would be answered from the cache and flatter the figures)."""

    def __call__(self, req) -> str:
        if "Write one question" in req.prompt:
            who = re.search(r"number (\d+)", req.prompt).group(1)
            return json.dumps({**self.question, "question": f"What does person {who} in the red shirt do, in order?"})
        return super().__call__(req)


def _serve(latency: float, queue) -> None:
    """The scripted server in its own process, so its JSON/base64 work does not share our GIL."""
    import threading

    server = FakeOpenAIServer(responder=_PerPerson(), latency_s=latency).start()
    queue.put(server.base_url)
    threading.Event().wait()


def _stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/_stats") as r:
        return json.loads(r.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=24, help="questions")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per request at the endpoint")
    ap.add_argument("--concurrency", type=int, default=4, help="questions at a time = requests in flight per model")
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_serve, args=(args.latency, queue), daemon=True)
    proc.start()
    url = queue.get(timeout=60)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            video = moving_square_video(tmp / "clip.mp4", seconds=8.0, size=(320, 240))
            entry = {"base_url": url, "max_frames": 4, "max_side": 160, "max_concurrency": args.concurrency}
            reg = parse_registry({"models": {
                "writer": {"model_id": "org/writer", **entry}, "strong": {"model_id": "org/strong", "weight": 2.0, **entry},
                "mid": {"model_id": "org/mid", **entry}, "weak": {"model_id": "org/weak", **entry},
            }, "active": ["strong", "mid", "weak"]}, environ={})
            wh = Warehouse(tmp / "wh.duckdb")
            client = MllmClient(reg, wh)  # one per process, as in an asset run

            def one(i: int):
                labels = clip_labels(duration_s=8, tracks=[full(0, 8)], path=video)
                labels.rows["appearance"][0]["text"] = f"a person in a red shirt, benchmark person number {i}"
                models = SynthesisModels(client, reg.get("writer"), reg.active(), f"bench{i}", "BTA")
                out = run_family(bta.FAMILY, labels, synthesis=models, marked_video=lambda m: (
                    render_question_video(video, labels.clip.sha256, labels.tracks, m, tmp / "q")))
                assert out.status == "selected", out.candidate_row()
                return models.stats

            render_question_video(video, "ab" * 32, clip_labels(tracks=[full(0, 8)]).tracks,
                                  {"kind": "red_box", "track_ids": [0]}, tmp / "q")  # once, outside the timing
            for tag in ("first run", "rerun"):
                if tag == "rerun":
                    client = MllmClient(reg, wh)  # a new process: the cache comes from model_calls
                before = _stats(url)["requests"]
                t0 = time.perf_counter()
                with ThreadPoolExecutor(args.concurrency) as pool:
                    stats = list(pool.map(one, range(args.n)))
                wall = time.perf_counter() - t0
                sent = _stats(url)["requests"] - before
                made = sum(s.made for s in stats)
                cached = sum(s.cached for s in stats)
                print(f"[{tag}] {args.n} BTA questions, latency {args.latency:.3f}s, concurrency {args.concurrency}: "
                      f"{wall:.2f}s, {60 * args.n / wall:.1f} questions/min; requests sent {sent} "
                      f"({sent / args.n:.2f} per question), calls made {made}, cached {cached}")
                if tag == "first run" and args.latency > 0:
                    ideal = args.n * CALLS_PER_QUESTION * args.latency / args.concurrency
                    path = args.n * ROUNDS_PER_QUESTION * args.latency / args.concurrency
                    print(f"  ideal (calls x latency / concurrency) {ideal:.2f}s -> measured/ideal {wall / ideal:.2f}; "
                          f"critical path ({ROUNDS_PER_QUESTION} sequential rounds per question, the answerers in "
                          f"parallel) {path:.2f}s -> measured/critical path {wall / path:.2f}; "
                          f"max in flight at the server {_stats(url)['max_in_flight']}")
            total, distinct = _stats(url)["requests"], wh.count(MODEL_CALLS)
            print(f"  requests over both runs {total}; distinct request contents (model_calls rows) {distinct}: "
                  f"{'no repeated call for the same input' if total == distinct else 'REPEATED CALLS'}")
    finally:
        proc.terminate()
        proc.join(10)


if __name__ == "__main__":
    main()
