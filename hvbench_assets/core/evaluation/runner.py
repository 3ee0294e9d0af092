"""Evaluate one model on one benchmark: prompts, frames, bounded concurrency, resume, progress bar.

Every reply is queued for `eval_responses` as soon as it arrives (one row per item and rotation) and a
writer thread commits the queue every FLUSH_S seconds: Ctrl-C or SIGTERM store every reply received, a
hard kill loses at most that window (those items are asked again), and a rerun with the same run id
skips every item whose row exists with the same item hash. Failed calls (`status = failed`) are asked again on the next run.

Speed: the pool has twice as many threads as request slots, so the next items' frames are decoded
while `concurrency` requests are in flight; nothing on the submitting thread touches the warehouse;
the run's start (stale rows, resume plan, run row) and its end (last rows, run row) are one
transaction each. A configuration error (wrong key, wrong endpoint) stops the run at once.
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
from hvbench_assets.core.benchmark.layout import BenchmarkItem, LoadedBenchmark
from hvbench_assets.core.tasks.catalog import task_info
from hvbench_assets.core.benchmark.open_ended import is_open
from hvbench_assets.core.benchmark.yesno import is_yesno
from hvbench_assets.core.evaluation.arms import ARMS, ArmUnavailable, arm_unavailable
from hvbench_assets.core.evaluation.open_grading import grade_open
from hvbench_assets.core.evaluation.prompt import (
    OPEN_PROMPT_VERSION,
    PROMPT_VERSION,
    YESNO_PROMPT_VERSION,
    arm_prompt,
    read_reply,
)
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.media import NoAudioError, load_audio
from hvbench_assets.core.media.errors import MediaError
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.scoring.circular import original_letter, rotate_item, rotations
from hvbench_assets.core.scoring.extraction import PARSED
from hvbench_assets.core.scoring.judge import JUDGE_PROMPT_VERSION, judge_option
from hvbench_assets.core.scoring.open_judge import OPEN_JUDGE_PROMPT_VERSION
from hvbench_assets.core.scoring.open_match import OPEN_MATCH_VERSION
from hvbench_assets.core.warehouse import Warehouse

EVAL_CODE_VERSION = "eval-v1"
AUDIO_RATE = 16000
FLUSH_S = 2.0  # each commit costs ~50 ms of CPU (DuckDB open, write, checkpoint, close)


class ModelMisconfigured(RuntimeError):
    """The model's key or endpoint is wrong: every further item would fail the same way. The message
    names the setting to fix."""


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
    arm: str = "full"  # full | frames | audio | text (core/evaluation/arms.py)

    def __post_init__(self) -> None:
        if self.arm not in ARMS:
            raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {self.arm!r}")
        if self.audio not in ("auto", "always", "never"):
            raise ValueError(f"audio must be auto, always or never, got {self.audio!r}")
        if self.n_frames is None and self.fps is None:
            raise ValueError("set n_frames or fps")

    def answer_settings(self) -> dict[str, Any]:
        """What changes the replies, hence the run id (not concurrency, limit or task selection)."""
        settings = {"model": self.model, "n_frames": self.n_frames, "fps": self.fps, "max_side": self.max_side,
                    "audio": self.audio, "circular": self.circular, "judge_model": self.judge_model,
                    "prompt": PROMPT_VERSION}
        if self.arm != "full":  # the full arm keeps the run ids of runs made before arms existed
            settings.update(arm=self.arm, prompt=arm_prompt_version(self.arm))
        if self.judge_model:
            settings["judge_prompt"] = JUDGE_PROMPT_VERSION
        return settings if self.seed is None else {**settings, "seed": self.seed}


def arm_prompt_version(arm: str) -> str:
    from hvbench_assets.core.evaluation.prompt import AUDIO_ONLY_PROMPT_VERSION, BLIND_PROMPT_VERSION

    return {"audio": AUDIO_ONLY_PROMPT_VERSION, "text": BLIND_PROMPT_VERSION}.get(arm, PROMPT_VERSION)


def benchmark_format(benchmark: LoadedBenchmark) -> str:
    """mc | yesno | open: the format of the benchmark's items (an export holds one format)."""
    if any(is_yesno(i) for i in benchmark.items):
        return "yesno"
    return "open" if any(is_open(i) for i in benchmark.items) else "mc"


def run_settings(config: EvalConfig, item_format: str = "mc") -> dict[str, Any]:
    """What changes the replies and their grades: the config's settings, with the format's prompt (and for open
    items the matcher's and the open judge's versions)."""
    settings = config.answer_settings()
    if item_format == "yesno":
        return {**settings, "prompt": YESNO_PROMPT_VERSION}
    if item_format == "open":
        settings = {**settings, "prompt": OPEN_PROMPT_VERSION, "match": OPEN_MATCH_VERSION}
        return {**settings, "judge_prompt": OPEN_JUDGE_PROMPT_VERSION} if config.judge_model else settings
    return settings


def run_id_for(benchmark: str, config: EvalConfig, item_format: str = "mc") -> str:
    digest = hashlib.sha256(json.dumps(run_settings(config, item_format), sort_keys=True).encode()).hexdigest()[:8]
    return f"{benchmark}__{config.model}__{digest}"


@dataclass
class RunOutcome:
    run_id: str
    asked: int = 0  # jobs sent to the model in this invocation
    skipped: int = 0  # jobs already answered by an earlier invocation
    answered: int = 0  # rows (parsed or unparsed) recorded in this invocation
    failed: int = 0
    transient: int = 0  # of the failed: endpoint down / rate limited after the client's retries
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
        self.item_format = benchmark_format(benchmark)
        self.run_id = run_id_for(benchmark.name, config, self.item_format)
        self.accepts_audio = answerer.accepts_audio(config.model)  # also fails fast for an unknown model
        why = arm_unavailable(config.arm, config.model, self.accepts_audio, config.audio)
        if why:
            raise ArmUnavailable(why)
        self.send_audio = config.arm == "audio" or (config.arm == "full" and (
            config.audio == "always" or (config.audio == "auto" and self.accepts_audio)))
        self.send_frames = config.arm in ("full", "frames")
        self._writer: _RowWriter | None = None
        self._statuses: dict[tuple, str] = {}  # key -> status of this run's rows (kept current for the run row)
        self._slots = threading.BoundedSemaphore(max(1, config.concurrency))

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

    def _todo(self, done: dict[tuple, str]) -> tuple[list[tuple[BenchmarkItem, int]], int]:
        """(jobs, skipped): each selected (item, rotation) is skipped when `done` holds its current fingerprint."""
        jobs, skipped = [], 0
        for item in self.selected_items():
            for shift in rotations(item, self.config.circular):
                if done.get((item.task, item.question_id, shift)) == item.fingerprint:
                    skipped += 1
                else:
                    jobs.append((item, shift))
        return jobs, skipped

    def _start(self) -> tuple[list[tuple[BenchmarkItem, int]], int]:
        """One transaction: drop rows of items no longer in the benchmark (reports count current items
        only), read what is answered, write the run row as `running`. Returns (jobs, skipped)."""
        current = {(i.task, i.question_id) for i in self.bench.items}
        plan: dict[str, Any] = {}

        def build(con):
            rows = con.execute("SELECT task, question_id, rotation, item_hash, status FROM eval_responses "
                               "WHERE run_id = ?", [self.run_id]).fetchall()
            stale = {(t, q, r) for t, q, r, _, _ in rows if (t, q) not in current}
            self._statuses = {(t, q, r): st for t, q, r, _, st in rows if (t, q, r) not in stale}
            done = {(t, q, r): h for t, q, r, h, st in rows if st != "failed" and (t, q, r) not in stale}
            jobs, skipped = self._todo(done)
            plan.update(jobs=jobs, skipped=skipped)
            deletes = [(EVAL_RESPONSES, {"run_id": self.run_id, "task": t, "question_id": q, "rotation": r}, [], None)
                       for t, q, r in sorted(stale)]
            return deletes + [self._run_item(len(jobs) + skipped, "running")]

        self.warehouse.read_then_replace([EVAL_RUNS, EVAL_RESPONSES], build)
        return plan["jobs"], plan["skipped"]

    def plan(self) -> tuple[list[tuple[BenchmarkItem, int]], int]:
        """(jobs still to ask, items already answered) without writing anything."""
        if not self.warehouse.has_table(EVAL_RESPONSES.name):
            done = {}
        else:
            rows = self.warehouse.query("SELECT task, question_id, rotation, item_hash FROM eval_responses "
                                        "WHERE run_id = ? AND status <> 'failed'", [self.run_id])
            done = {(r["task"], r["question_id"], r["rotation"]): r["item_hash"] for r in rows}
        return self._todo(done)

    # -- one question ------------------------------------------------------------------------
    def ask(self, item: BenchmarkItem, shift: int) -> dict[str, Any]:
        asked = rotate_item(item, shift) if shift else item
        prompt, _ = arm_prompt(asked, self.config.arm)
        row: dict[str, Any] = {
            "run_id": self.run_id, "arm": self.config.arm, "benchmark": self.bench.name, "task": item.task,
            "question_id": item.question_id,
            "rotation": shift, "item_hash": item.fingerprint, "n_options": item.n_options, "letters": asked.letters,
            "options": [o.text for o in asked.options],
            "answer": asked.answer, "answer_original": item.answer, "correct": False,
            "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest()[:16],
        }
        try:
            frames = _frames(str(item.video_path), self.config.n_frames, self.config.fps,
                             self.config.max_side) if self.send_frames else ()
            audio = _audio(str(item.video_path)) if self.send_audio else None
        except (MediaError, OSError) as exc:
            return {**row, "status": "failed", "method": "video", "error": f"{item.video_path}: {exc}",
                    "frames_sent": 0, "audio_sent": False, "answered_at": _now()}
        if self.config.arm == "audio" and audio is None:  # nothing to listen to: no request
            return {**row, "status": "failed", "method": "no_audio", "frames_sent": 0, "audio_sent": False,
                    "error": f"{item.video_path}: no audio track for the audio-only arm", "answered_at": _now()}
        extra = {} if self.config.seed is None else {"params": {"seed": self.config.seed}}
        with self._slots:  # frames above are decoded outside the slot, while other requests wait
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
            return {**row, "status": "failed", "method": "call_error", "_transient": bool(getattr(result, "transient", False)),
                    "_fatal": bool(getattr(result, "fatal", False))}
        if is_open(asked):  # graded against the reference: the matcher, then the judge
            return {**row, **grade_open(asked, text, self.answerer, self.config.judge_model, self._slots)}
        verdict = read_reply(asked, text)
        if verdict.status != PARSED and self.config.judge_model and verdict.method != "empty":
            options = [(o.letter, o.text) for o in asked.options]
            with self._slots:
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
        warm = getattr(self.answerer, "warm_up", None)
        if warm is not None:  # backend import, connection pool, call-cache index: alongside the planning below
            threading.Thread(target=warm, args=(self.config.model,), daemon=True, name="eval-warm-up").start()
        jobs, skipped = self._start()
        out = RunOutcome(self.run_id, asked=len(jobs), skipped=skipped)
        bar = _progress_bar(len(jobs) + skipped, skipped, progress, f"{self.config.model} on {self.bench.name}")
        self._writer = _RowWriter(self.warehouse, self._provenance())
        stop = threading.Event()
        workers = 2 * max(1, self.config.concurrency)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eval")
        pending: set[Future] = set()
        stored: set[Future] = set()
        todo = iter(jobs)
        fatal: str | None = None
        try:
            # at most 2x the worker count queued, so an interruption leaves little in flight
            for _ in range(2 * workers):
                self._submit(pool, pending, todo, stop)
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    pending.discard(fut)
                    if fut in stored or fut.cancelled():
                        continue
                    stored.add(fut)
                    row = fut.result()
                    if row.get("_fatal"):  # stop asking; the item stays unanswered for the next run
                        fatal = fatal or row["error"]
                        stop.set()
                        for other in pending:
                            other.cancel()
                        continue
                    self._store(row, out, bar)
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
                if fut not in stored and not fut.cancelled() and fut.exception() is None and not fut.result().get("_fatal"):
                    stored.add(fut)
                    self._store(fut.result(), out, bar)
            raise
        finally:
            pool.shutdown(wait=True)
            if bar is not None:
                bar.close()
            if out.status != "interrupted":
                out.status = "misconfigured" if fatal else "complete" if out.failed == 0 else "partial"
            self._finish(out)
        if fatal:
            raise ModelMisconfigured(fatal)
        return out

    def _submit(self, pool, pending: set, todo, stop: threading.Event) -> None:
        if stop.is_set():
            return
        job = next(todo, None)
        if job is not None:
            pending.add(pool.submit(self.ask, *job))

    def _store(self, row: dict, out: RunOutcome, bar) -> None:
        transient = row.pop("_transient", False)
        row.pop("_fatal", None)
        self._writer.add(row)
        self._statuses[(row["task"], row["question_id"], row["rotation"])] = row["status"]
        out.rows.append(row)
        if row["status"] == "failed":
            out.failed += 1
            out.transient += transient
        else:
            out.answered += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(failed=out.failed, refresh=False)

    def _finish(self, out: RunOutcome) -> None:
        """The last rows and the run row in one transaction; the model-call log committed too."""
        flush = getattr(self.answerer, "flush", None)
        if flush is not None:
            flush()
        self._writer.close(extra=[self._run_item(out.asked + out.skipped, out.status)])

    def _provenance(self) -> dict[str, str]:
        return {"backend": getattr(self.answerer, "name", type(self.answerer).__name__),
                "model": self.config.model, "code_version": EVAL_CODE_VERSION}

    def _run_item(self, n_items: int, status: str) -> tuple:
        bad = sum(st == "failed" for st in self._statuses.values())
        return (EVAL_RUNS, {"run_id": self.run_id}, [{
            "benchmark": self.bench.name, "benchmark_root": to_stored(self.bench.root),
            "benchmark_fingerprint": self.bench.fingerprint,
            "config": {**run_settings(self.config, self.item_format), "concurrency": self.config.concurrency,
                       "limit": self.config.limit, "tasks": list(self.config.tasks or []),
                       "send_audio": self.send_audio, "arm": self.config.arm},
            "n_items": n_items, "n_answered": len(self._statuses) - bad, "n_failed": bad,
            "load_issues": [asdict(i) for i in self.bench.issues], "status": status, "updated_at": _now(),
        }], self._provenance())


def _progress_bar(total: int, initial: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm import tqdm  # only when drawn: saves its import on quiet runs

    return tqdm(total=total, initial=initial, unit="q", desc=desc, dynamic_ncols=True)


class _RowWriter:
    """Commits queued eval_responses rows from its own thread every FLUSH_S seconds (one transaction per
    batch), so the thread handing out work never waits for the warehouse lock."""

    def __init__(self, warehouse: Warehouse, provenance: dict):
        self.warehouse, self.provenance = warehouse, provenance
        self._rows: list[dict] = []
        self._cond = threading.Condition()
        self._closed = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="eval-rows-writer", daemon=True)
        self._thread.start()

    def add(self, row: dict) -> None:
        if self._error is not None:
            raise self._error
        with self._cond:
            self._rows.append(row)

    def _take(self) -> list[dict]:
        with self._cond:
            rows, self._rows = self._rows, []
            return rows

    def _write(self, rows: list[dict], extra: Sequence[tuple] = ()) -> None:
        if not rows and not extra:
            return
        items = [(EVAL_RESPONSES, {k: r[k] for k in EVAL_RESPONSES.key}, [r], self.provenance) for r in rows]
        self.warehouse.replace_tables(items + list(extra))

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed, timeout=FLUSH_S)
                if self._closed:
                    return
            rows = self._take()
            try:
                self._write(rows)
            except BaseException as exc:  # kept for close(): the rows go back to the queue
                with self._cond:
                    self._rows[:0] = rows
                self._error = exc
                return

    def close(self, extra: Sequence[tuple] = ()) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()
        self._error = None
        self._write(self._take(), extra)


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

