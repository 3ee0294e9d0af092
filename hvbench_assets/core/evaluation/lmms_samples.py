"""Import lmms-eval sample logs (`--log_samples`) of an `hvbench lmms-export` task group as one run.

A sample is found by its task and `doc_id`, the index of its doc in the task's data file (`task_items`). Its task
is `doc.task` when lmms-eval logged the doc, else a `task` field, else the file name lmms-eval gives a sample log,
`<date>_samples_<lmms task>.jsonl` (0.7.x logs no task per sample). What the sample carries is checked against
the item: the prompt (`input`), the target letter, `doc.question_id` and `doc.item_hash`. The prompt alone is no
key: items of one task often share it (same generated question, same options, another clip), so a sample
without a doc_id is matched by its prompt only when no other item has that prompt.

    import_lmms_samples(wh, bench, files, model="gpt4o")   # -> (run id, rows stored, warnings)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.layout import BenchmarkItem, LoadedBenchmark
from hvbench_assets.core.tasks.catalog import task_info
from hvbench_assets.core.evaluation.lmms import group_name, lmms_task_name, task_items
from hvbench_assets.core.benchmark.open_ended import is_open
from hvbench_assets.core.evaluation.open_grading import grade_open
from hvbench_assets.core.evaluation.prompt import arm_prompt, read_reply
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.warehouse import Warehouse

# v2: matched by task and doc_id (v1 matched by prompt and put the replies of items sharing a prompt on one item)
LMMS_IMPORT_VERSION = "lmms-import-v2"
_SAMPLE_LOG = re.compile(r"_samples_(?P<task>.+)\.jsonl$")


class LmmsImportError(ValueError):
    """A sample file that cannot be imported; the message names the file and line."""


@dataclass(frozen=True)
class Sample:
    file: str
    line: int
    data: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def doc(self) -> dict[str, Any]:
        return self.data["doc"] if isinstance(self.data.get("doc"), dict) else {}

    @property
    def doc_id(self) -> int | None:
        value = self.data.get("doc_id")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def prompt(self) -> str | None:
        return self.data["input"] if isinstance(self.data.get("input"), str) else None

    def reply(self) -> str | None:
        """The raw reply (resps may be nested one or two levels)."""
        value: Any = self.data.get("resps")
        if value in (None, [], ""):
            value = self.data.get("filtered_resps")
        while isinstance(value, (list, tuple)):
            value = value[0] if value else None
        return value if isinstance(value, str) else None


def read_samples(files: Sequence[str | Path]) -> list[Sample]:
    out = []
    for f in files:
        for n, line in enumerate(Path(f).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LmmsImportError(f"{f}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(data, dict):
                raise LmmsImportError(f"{f}:{n}: not an lmms-eval sample (a JSON object per line)")
            out.append(Sample(str(f), n, data))
    return out


class SampleMatcher:
    """Finds the item a sample answers; returns (item, None) or (None, why it is skipped), raises when the log
    cannot be read as a log of this benchmark."""

    def __init__(self, bench: LoadedBenchmark):
        self.bench = bench
        self.lmms_tasks = {lmms_task_name(group_name(bench), t): t for t in bench.tasks}
        self.docs = {t: task_items(bench, t) for t in bench.tasks}
        self.by_qid = {i.question_id: i for i in bench.items}
        self.by_prompt: dict[str, list[BenchmarkItem]] = defaultdict(list)
        for item in bench.items:
            self.by_prompt[_prompt(item)].append(item)

    def task_of(self, s: Sample) -> str:
        named = s.doc.get("task") or s.data.get("task")
        if isinstance(named, str) and named:
            task = self.lmms_tasks.get(named) or (task_info(named).name if task_info(named) else None)
            if task not in self.docs:
                raise LmmsImportError(f"{s.where}: task {named!r} is not a task of benchmark {self.bench.name}")
            return task
        m = _SAMPLE_LOG.search(Path(s.file).name)
        if m and m.group("task") in self.lmms_tasks:
            return self.lmms_tasks[m.group("task")]
        got = f"<task> is {m.group('task')!r}" if m else "the name is not of that form"
        raise LmmsImportError(
            f"{s.file}: cannot tell which task its samples answer: lmms-eval logs no task per sample and names each "
            f"sample log <date>_samples_<task>.jsonl, but {got}; the tasks of benchmark {self.bench.name} are "
            f"{', '.join(self.lmms_tasks)} (keep lmms-eval's file names; --name sets the benchmark name the export "
            "was made under)")

    def match(self, s: Sample) -> tuple[BenchmarkItem | None, str | None]:
        if "question_id" not in s.doc and s.prompt is None:  # lmms-eval logs every prompt as `input`
            raise LmmsImportError(f"{s.where}: not an lmms-eval sample of an hvbench task (no input prompt, no "
                                  "doc.question_id)")
        if "question_id" in s.doc:  # an lmms-eval that logs the doc: its id is the key
            item = self.by_qid.get(str(s.doc["question_id"]))
            if item is None:
                return None, f"{s.where}: question {s.doc['question_id']} is not in benchmark {self.bench.name}; skipped"
        elif s.doc_id is not None:
            task = self.task_of(s)
            docs = self.docs[task]
            if not 0 <= s.doc_id < len(docs):
                return None, (f"{s.where}: doc_id {s.doc_id} of {task}, which has {len(docs)} items in benchmark "
                              f"{self.bench.name} (it changed since the export); skipped")
            item = docs[s.doc_id]
            if s.prompt is not None and s.prompt != _prompt(item):
                by_text = [i.question_id for i in self.by_prompt.get(s.prompt, [])]
                if by_text:
                    raise LmmsImportError(
                        f"{s.where}: ambiguous: doc_id {s.doc_id} of {task} is {item.question_id}, but the logged "
                        f"prompt is that of {', '.join(by_text)}; it could be any of "
                        f"{', '.join([item.question_id, *by_text])}. The benchmark changed since the lmms-eval "
                        "export: export again (hvbench lmms-export) and rerun lmms-eval")
                return None, f"{s.where}: question {item.question_id} changed since the export (other prompt); skipped"
        else:
            found = self.by_prompt.get(s.prompt, [])
            if len(found) > 1:
                return None, (f"{s.where}: no doc_id, and {len(found)} items share its prompt "
                              f"({', '.join(i.question_id for i in found)}): cannot tell which it answers; skipped")
            if not found:
                return None, f"{s.where}: question {s.prompt[:80]!r} is not in benchmark {self.bench.name} (or " \
                             "changed since the export); skipped"
            item = found[0]
        target = s.data.get("target")
        if (s.doc.get("item_hash") and s.doc["item_hash"] != item.fingerprint) or \
                (isinstance(target, str) and target and target != item.answer):
            return None, f"{s.where}: question {item.question_id} changed since the export; skipped"
        return item, None


def import_lmms_samples(warehouse: Warehouse, bench: LoadedBenchmark, files: Sequence[str | Path], model: str,
                        ) -> tuple[str, int, list[str]]:
    """Store lmms-eval replies as one run of `model` on `bench` (run id names lmms-eval and the model),
    parsed by the same rules as `hvbench eval`. The run is replaced as a whole, and so are runs an earlier
    import version made of the same model. Returns (run id, rows stored, warnings)."""
    matcher = SampleMatcher(bench)
    prompt = arm_prompt(bench.items[0], "full")[1] if bench.items else None  # an export holds one format
    settings = {"source": "lmms-eval", "model": model, "prompt": prompt, "import": LMMS_IMPORT_VERSION}
    run_id = f"{bench.name}__lmms-{model}__{hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]}"
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    rows, warnings, first = [], [], {}
    for s in read_samples(files):
        item, skipped = matcher.match(s)
        if item is None:
            warnings.append(skipped)
            continue
        if item.question_id in first:
            raise LmmsImportError(f"{s.where}: a second reply to {item.question_id} ({item.task}), the first is at "
                                  f"{first[item.question_id]}: pass the sample logs of one lmms-eval run")
        first[item.question_id] = s.where
        rows.append(_row(item, s, run_id, bench.name, now))
    if not rows:
        return run_id, 0, warnings
    prov = {"backend": "lmms-eval", "model": model, "code_version": LMMS_IMPORT_VERSION}
    failed = sum(r["status"] == "failed" for r in rows)
    run = {"benchmark": bench.name, "benchmark_root": to_stored(bench.root), "benchmark_fingerprint": bench.fingerprint,
           "config": {**settings, "files": [str(f) for f in files]}, "n_items": len(rows),
           "n_answered": len(rows) - failed, "n_failed": failed, "load_issues": [], "updated_at": now,
           "status": "complete" if not failed else "partial"}

    def build(con):  # the whole run, and the runs earlier import versions made of this model, give way to this one
        runs = [r for r, c in con.execute("SELECT run_id, config FROM eval_runs WHERE benchmark = ?", [bench.name]).fetchall()
                if _imported_of(c, model)] + [run_id]
        old = con.execute("SELECT run_id, task, question_id, rotation FROM eval_responses WHERE list_contains(?, run_id)",
                          [runs]).fetchall()
        return ([(EVAL_RESPONSES, dict(zip(EVAL_RESPONSES.key, k)), [], None) for k in old]
                + [(EVAL_RUNS, {"run_id": r}, [], None) for r in dict.fromkeys(runs)]
                + [(EVAL_RESPONSES, {k: r[k] for k in EVAL_RESPONSES.key}, [r], prov) for r in rows]
                + [(EVAL_RUNS, {"run_id": run_id}, [run], prov)])

    warehouse.read_then_replace([EVAL_RESPONSES, EVAL_RUNS], build)
    return run_id, len(rows), warnings


def _prompt(item: BenchmarkItem) -> str:
    """What the export's doc_to_text gives lmms-eval: the prompt `hvbench eval` sends."""
    return arm_prompt(item, "full")[0]


def _imported_of(config: Any, model: str) -> bool:
    config = json.loads(config) if isinstance(config, str) else config or {}
    return config.get("source") == "lmms-eval" and config.get("model") == model


def _row(item: BenchmarkItem, s: Sample, run_id: str, benchmark: str, now: dt.datetime) -> dict[str, Any]:
    text = s.reply()
    row = {"run_id": run_id, "arm": "full", "benchmark": benchmark, "task": item.task,
           "question_id": item.question_id, "rotation": 0, "item_hash": item.fingerprint,
           "n_options": item.n_options, "letters": item.letters, "options": [o.text for o in item.options],
           "answer": item.answer, "answer_original": item.answer, "response": text, "answered_at": now,
           "prompt_hash": hashlib.sha256(_prompt(item).encode()).hexdigest()[:16]}
    if text is None:
        return {**row, "status": "failed", "method": "no_reply", "correct": False,
                "error": f"{s.where}: no reply in the sample"}
    if is_open(item):  # the matcher's grade (lmms-eval ran no judge; `hvbench eval --judge` can)
        return {**row, **grade_open(item, text, None, None)}
    verdict = read_reply(item, text)
    return {**row, "status": verdict.status, "method": verdict.method, "chosen": verdict.letter,
            "chosen_original": verdict.letter, "correct": verdict.letter == item.answer}
