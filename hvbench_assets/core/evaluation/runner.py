"""Evaluate one model on one benchmark: prompts, frames, bounded concurrency, resume, progress bar.

Every reply is written to `eval_responses` as soon as it arrives (one row per item and rotation), so
a killed run loses nothing it has recorded, and a rerun with the same run id skips every item whose
row exists with the same item hash. Failed calls (`status = failed`) are asked again on the next run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from hvbench_assets.core.benchmark.layout import BenchmarkItem, LoadedBenchmark
from hvbench_assets.core.benchmark.tasks import task_info
from hvbench_assets.core.evaluation.prompt import PROMPT_VERSION, letter_only_prompt
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.media import NoAudioError, load_audio
from hvbench_assets.core.media.errors import MediaError
from hvbench_assets.core.scoring.circular import original_letter, rotate_item, rotations
from hvbench_assets.core.scoring.extraction import PARSED, extract_option
from hvbench_assets.core.scoring.judge import JUDGE_PROMPT_VERSION, judge_option
from hvbench_assets.core.warehouse import Warehouse

EVAL_CODE_VERSION = "eval-v1"
AUDIO_RATE = 16000
FLUSH_ROWS = 32
FLUSH_S = 0.5


class Answerer(Protocol):
    """What the runner needs from a model backend. `answer` returns a ChatResult-like object with
    text, call_id, prompt_hash, tokens_in, tokens_out, latency_s, cached, error (missing ones = None).
    Seeded runs also pass `params={"seed": k}`; an answerer without that keyword cannot run them."""

    name: str

    def answer(self, model: str, prompt: str, frames: Sequence[np.ndarray] = (), audio: np.ndarray | None = None) -> Any: ...

    def accepts_audio(self, model: str) -> bool: ...


@dataclass(frozen=True)
class EvalConfig:
    model: str
    n_frames: int | None = 8  # evenly spaced frames per video; None with fps set: one frame per 1/fps s
    fps: float | None = None
    max_side: int = 768
    audio: str = "auto"  # auto: when the model accepts audio | always | never
    circular: bool = False  # ask every rotation of the options; right only if right under all
    judge_model: str | None = None  # LLM judge for replies the rules cannot parse
    concurrency: int = 4
    limit: int | None = None  # at most this many items per task (smoke runs); not part of the run id
    tasks: tuple[str, ...] | None = None
    seed: int | None = None  # repeated runs (the paper averages 5 seeds): sent as the request's `seed`

    def __post_init__(self) -> None:
        if self.audio not in ("auto", "always", "never"):
            raise ValueError(f"audio must be auto, always or never, got {self.audio!r}")
        if self.n_frames is None and self.fps is None:
            raise ValueError("set n_frames or fps")

    def answer_settings(self) -> dict[str, Any]:
        """What changes the replies, hence the run id (not concurrency, limit or task selection)."""
        settings = {"model": self.model, "n_frames": self.n_frames, "fps": self.fps, "max_side": self.max_side,
                    "audio": self.audio, "circular": self.circular, "judge_model": self.judge_model,
                    "prompt": PROMPT_VERSION}
        if self.judge_model:
            settings["judge_prompt"] = JUDGE_PROMPT_VERSION
        return settings if self.seed is None else {**settings, "seed": self.seed}


def run_id_for(benchmark: str, config: EvalConfig) -> str:
    digest = hashlib.sha256(json.dumps(config.answer_settings(), sort_keys=True).encode()).hexdigest()[:8]
    return f"{benchmark}__{config.model}__{digest}"


@dataclass
class RunOutcome:
    run_id: str
    asked: int = 0  # jobs sent to the model in this invocation
    skipped: int = 0  # jobs already answered by an earlier invocation
    answered: int = 0  # rows (parsed or unparsed) recorded in this invocation
    failed: int = 0
    status: str = "complete"
    rows: list[dict] = field(default_factory=list, repr=False)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


# small caches: circular rotations of one item run back to back; frames are large
@lru_cache(maxsize=8)
def _frames(path: str, n_frames: int | None, fps: float | None, max_side: int) -> tuple[np.ndarray, ...]:
    from hvbench_assets.core.mllm.frames import (
        sample_frames,  # the MLLM layer owns frame sampling
    )

    return tuple(sample_frames(path, n_frames=n_frames, fps=fps, max_side=max_side))


@lru_cache(maxsize=8)
def _audio(path: str) -> np.ndarray | None:
    try:
        return load_audio(path, sample_rate=AUDIO_RATE)
    except NoAudioError:
        return None


class Evaluator:
    def __init__(self, benchmark: LoadedBenchmark, answerer: Answerer, warehouse: Warehouse, config: EvalConfig):
        self.bench = benchmark
        self.answerer = answerer
        self.warehouse = warehouse
        self.config = config
        self.run_id = run_id_for(benchmark.name, config)
        self.accepts_audio = answerer.accepts_audio(config.model)  # also fails fast for an unknown model
        self.send_audio = config.audio == "always" or (config.audio == "auto" and self.accepts_audio)
        self._buffer: list[dict] = []
        self._flushed_at = time.monotonic()

    # -- planning ----------------------------------------------------------------------------
    def selected_items(self) -> list[BenchmarkItem]:
        wanted = {task_info(t).name if task_info(t) else t for t in self.config.tasks} if self.config.tasks else None
        per_task: dict[str, int] = {}
        out = []
        for item in self.bench.items:
            if wanted is not None and item.task not in wanted:
                continue
            per_task[item.task] = per_task.get(item.task, 0) + 1
            if self.config.limit is None or per_task[item.task] <= self.config.limit:
                out.append(item)
        return out

    def answered(self) -> dict[tuple[str, str, int], str]:
        """(task, question_id, rotation) -> item hash, for rows that hold a reply."""
        if not self.warehouse.has_table(EVAL_RESPONSES.name):
            return {}
        rows = self.warehouse.query(
            "SELECT task, question_id, rotation, item_hash FROM eval_responses WHERE run_id = ? AND status <> 'failed'",
            [self.run_id])
        return {(r["task"], r["question_id"], r["rotation"]): r["item_hash"] for r in rows}

    def plan(self) -> tuple[list[tuple[BenchmarkItem, int]], int]:
        done = self.answered()
        jobs, skipped = [], 0
        for item in self.selected_items():
            for shift in rotations(item, self.config.circular):
                if done.get((item.task, item.question_id, shift)) == item.fingerprint:
                    skipped += 1
                else:
                    jobs.append((item, shift))
        return jobs, skipped

    def prune_stale(self) -> int:
        """Drop rows of items no longer in the benchmark, so reports only count current items."""
        if not self.warehouse.has_table(EVAL_RESPONSES.name):
            return 0
        current = {(i.task, i.question_id) for i in self.bench.items}
        rows = self.warehouse.query(
            "SELECT DISTINCT task, question_id, rotation FROM eval_responses WHERE run_id = ?", [self.run_id])
        stale = [r for r in rows if (r["task"], r["question_id"]) not in current]
        for r in stale:
            self.warehouse.replace(EVAL_RESPONSES, {"run_id": self.run_id, **r}, [])
        return len(stale)

    # -- one question ------------------------------------------------------------------------
    def ask(self, item: BenchmarkItem, shift: int) -> dict[str, Any]:
        asked = rotate_item(item, shift) if shift else item
        prompt = letter_only_prompt(asked)
        row: dict[str, Any] = {
            "run_id": self.run_id, "benchmark": self.bench.name, "task": item.task, "question_id": item.question_id,
            "rotation": shift, "item_hash": item.fingerprint, "n_options": item.n_options, "letters": asked.letters,
            "options": [o.text for o in asked.options],
            "answer": asked.answer, "answer_original": item.answer, "correct": False,
            "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest()[:16],
        }
        try:
            frames = _frames(str(item.video_path), self.config.n_frames, self.config.fps, self.config.max_side)
            audio = _audio(str(item.video_path)) if self.send_audio else None
        except (MediaError, OSError) as exc:
            return {**row, "status": "failed", "method": "video", "error": f"{item.video_path}: {exc}",
                    "frames_sent": 0, "audio_sent": False, "answered_at": _now()}
        extra = {} if self.config.seed is None else {"params": {"seed": self.config.seed}}
        result = self.answerer.answer(self.config.model, prompt, frames, audio, **extra)
        text = getattr(result, "text", None)
        error = getattr(result, "error", None)
        row.update({
            "frames_sent": getattr(result, "frames_sent", None) or len(frames),
            "audio_sent": audio is not None and self.accepts_audio,
            "response": text, "call_id": getattr(result, "call_id", None),
            "prompt_hash": getattr(result, "prompt_hash", None) or row["prompt_hash"],
            "tokens_in": getattr(result, "tokens_in", None), "tokens_out": getattr(result, "tokens_out", None),
            "latency_s": getattr(result, "latency_s", None), "cached": bool(getattr(result, "cached", False)),
            "error": error, "answered_at": _now(),
        })
        if error or text is None:
            return {**row, "status": "failed", "method": "call_error"}
        options = [(o.letter, o.text) for o in asked.options]
        verdict = extract_option(text, options)
        if verdict.status != PARSED and self.config.judge_model and verdict.method != "empty":
            verdict, judged = judge_option(self.answerer, self.config.judge_model, asked.question, options, text)
            row["judge_response"] = getattr(judged, "text", None)
        row.update({
            "status": verdict.status, "method": verdict.method, "chosen": verdict.letter,
            "chosen_original": original_letter(verdict.letter, shift, item.n_options),
            "correct": verdict.letter == asked.answer,
        })
        return row

    # -- the run -----------------------------------------------------------------------------
    def run(self, progress: bool = True, on_result: Callable[[dict], None] | None = None) -> RunOutcome:
        self.warehouse.ensure(EVAL_RUNS, EVAL_RESPONSES)
        self.prune_stale()
        jobs, skipped = self.plan()
        out = RunOutcome(self.run_id, asked=len(jobs), skipped=skipped)
        self._record_run(out, "running")
        bar = tqdm(total=len(jobs) + skipped, initial=skipped, disable=not progress, unit="q",
                   desc=f"{self.config.model} on {self.bench.name}", dynamic_ncols=True)
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=max(1, self.config.concurrency), thread_name_prefix="eval")
        pending: set[Future] = set()
        stored: set[Future] = set()
        todo = iter(jobs)
        try:
            # keep at most 2x concurrency jobs queued so an interruption leaves little in flight
            for _ in range(2 * max(1, self.config.concurrency)):
                self._submit(pool, pending, todo, stop)
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    if fut not in stored:
                        stored.add(fut)
                        self._store(fut.result(), out, bar)
                    pending.discard(fut)
                    if on_result is not None:
                        on_result(out.rows[-1])
                    self._submit(pool, pending, todo, stop)
        except BaseException:
            stop.set()
            out.status = "interrupted"
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True)
            for fut in pending:  # replies that arrived while stopping are kept, not re-asked later
                if fut not in stored and not fut.cancelled() and fut.exception() is None:
                    stored.add(fut)
                    self._store(fut.result(), out, bar)
            raise
        finally:
            pool.shutdown(wait=True)
            self._flush(force=True)
            bar.close()
            if out.status != "interrupted":
                out.status = "complete" if out.failed == 0 else "partial"
            self._record_run(out, out.status)
        return out

    def _submit(self, pool, pending: set, todo, stop: threading.Event) -> None:
        if stop.is_set():
            return
        job = next(todo, None)
        if job is not None:
            pending.add(pool.submit(self.ask, *job))

    def _store(self, row: dict, out: RunOutcome, bar) -> None:
        self._buffer.append(row)
        self._flush(force=False)
        out.rows.append(row)
        if row["status"] == "failed":
            out.failed += 1
        else:
            out.answered += 1
        bar.update(1)
        bar.set_postfix(failed=out.failed, refresh=False)

    def _flush(self, force: bool) -> None:
        """Write buffered rows in one transaction: every FLUSH_ROWS rows or FLUSH_S seconds. A reply
        lost to a hard kill inside that window is in the MLLM call cache, so resuming does not pay for it."""
        if not self._buffer or not (force or len(self._buffer) >= FLUSH_ROWS
                                    or time.monotonic() - self._flushed_at >= FLUSH_S):
            return
        batch = list(self._buffer)
        self.warehouse.replace_many(EVAL_RESPONSES, [({k: r[k] for k in EVAL_RESPONSES.key}, [r]) for r in batch],
                                    provenance=self._provenance())
        del self._buffer[: len(batch)]  # only once written: an interrupted write is retried by the final flush
        self._flushed_at = time.monotonic()

    def _provenance(self) -> dict[str, str]:
        return {"backend": getattr(self.answerer, "name", type(self.answerer).__name__),
                "model": self.config.model, "code_version": EVAL_CODE_VERSION}

    def _record_run(self, out: RunOutcome, status: str) -> None:
        counts = self.warehouse.query(
            "SELECT count(*) FILTER (WHERE status <> 'failed') AS ok, count(*) FILTER (WHERE status = 'failed') AS bad "
            "FROM eval_responses WHERE run_id = ?", [self.run_id])[0]
        self.warehouse.replace(EVAL_RUNS, {"run_id": self.run_id}, [{
            "benchmark": self.bench.name, "benchmark_root": str(self.bench.root),
            "benchmark_fingerprint": self.bench.fingerprint,
            "config": {**self.config.answer_settings(), "concurrency": self.config.concurrency,
                       "limit": self.config.limit, "tasks": list(self.config.tasks or []),
                       "send_audio": self.send_audio},
            "n_items": out.asked + out.skipped, "n_answered": counts["ok"], "n_failed": counts["bad"],
            "load_issues": [asdict(i) for i in self.bench.issues], "status": status, "updated_at": _now(),
        }], provenance=self._provenance())


def evaluate(benchmark: LoadedBenchmark, answerer: Answerer, warehouse: Warehouse, config: EvalConfig,
             progress: bool = True, on_result: Callable[[dict], None] | None = None) -> RunOutcome:
    return Evaluator(benchmark, answerer, warehouse, config).run(progress=progress, on_result=on_result)


def responses(warehouse: Warehouse, run_ids: Sequence[str] | None = None, benchmark: str | None = None) -> list[dict]:
    """Rows of eval_responses (letters decoded), filtered by run ids or benchmark name."""
    rows = warehouse.rows(EVAL_RESPONSES, **({"benchmark": benchmark} if benchmark else {}))
    if run_ids is not None:
        wanted = set(run_ids)
        rows = [r for r in rows if r["run_id"] in wanted]
    return rows

