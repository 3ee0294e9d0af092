"""lmms-eval interop: export a benchmark as an lmms-eval task folder, import lmms-eval sample logs as runs.

The export is plain files (no lmms-eval import here): one JSONL of docs per task (question, options, the
exact letter-only prompt `hvbench eval` sends, the video's absolute path), one task YAML per task, a group
YAML, `utils.py` (doc_to_visual / doc_to_text / process_results) and `hvbench_extraction.py`, a copy of
core/scoring/extraction.py, so lmms-eval scores replies by the same rules as `hvbench eval`.

    export_lmms_task(bench, out_dir)         # -> out_dir/<group>/...; run: lmms-eval --include_path out_dir --tasks <group>
    import_lmms_samples(wh, bench, files, model="gpt4o")   # *_samples_<task>.jsonl -> eval_responses / eval_runs
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.layout import LoadedBenchmark
from hvbench_assets.core.benchmark.tasks import task_info
from hvbench_assets.core.evaluation.prompt import PROMPT_VERSION, letter_only_prompt
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.scoring import extraction
from hvbench_assets.core.scoring.extraction import extract_option
from hvbench_assets.core.warehouse import Warehouse

LMMS_EXPORT_VERSION = "lmms-task-v1"
LMMS_IMPORT_VERSION = "lmms-import-v1"
METRIC = "hvbench_accuracy"

UTILS_PY = '''"""lmms-eval hooks of an hvbench export ({version}). Plain Python: replies are scored by
hvbench_extraction.py, a copy of hvbench's own rules, so the accuracy equals `hvbench eval` on the same replies."""

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("hvbench_extraction", os.path.join(_HERE, "hvbench_extraction.py"))
extraction = sys.modules.setdefault("hvbench_extraction", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(extraction)  # registered first: its dataclasses look their module up


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    return [doc["video"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["prompt"]


def doc_to_target(doc):
    return doc["answer"]


def process_results(doc, results):
    reply = results[0] if results else ""
    while isinstance(reply, (list, tuple)):
        reply = reply[0] if reply else ""
    verdict = extraction.extract_option(reply or "", list(zip(doc["letters"], doc["options"])))
    return {{"{metric}": float(verdict.letter == doc["answer"]),
             "hvbench_unparsed": float(verdict.status != extraction.PARSED)}}
'''


def _task_yaml(task: str, group: str, data: Path) -> str:
    return (f"task: {group}_{task_info(task).abbrev.lower() if task_info(task) else task.lower()}\n"
            f"dataset_path: json\n"
            f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
            "test_split: test\noutput_type: generate_until\n"
            "doc_to_visual: !function utils.doc_to_visual\ndoc_to_text: !function utils.doc_to_text\n"
            "doc_to_target: !function utils.doc_to_target\nprocess_results: !function utils.process_results\n"
            "generation_kwargs:\n  max_new_tokens: 16\n  temperature: 0\n  do_sample: false\n"
            f"metric_list:\n  - metric: {METRIC}\n    aggregation: mean\n    higher_is_better: true\n"
            "  - metric: hvbench_unparsed\n    aggregation: mean\n    higher_is_better: false\n"
            f"metadata:\n  version: 1\n  hvbench_task: {task}\n  prompt: {PROMPT_VERSION}\n")


def group_name(bench: LoadedBenchmark) -> str:
    return "hvbench_" + re.sub(r"[^a-z0-9]+", "_", bench.name.lower()).strip("_")


def export_lmms_task(bench: LoadedBenchmark, out_dir: str | Path) -> Path:
    """Write the task folder out_dir/<group>/ and return it. Video paths are absolute (the folder is for
    this machine's videos; export again after moving them)."""
    group = group_name(bench)
    folder = Path(out_dir) / group
    (folder / "data").mkdir(parents=True, exist_ok=True)
    names = []
    for task in bench.tasks:
        docs = [{"question_id": i.question_id, "task": i.task, "question": i.question,
                 "letters": i.letters, "options": [o.text for o in i.options], "answer": i.answer,
                 "video": str(Path(i.video_path).resolve()), "prompt": letter_only_prompt(i), "item_hash": i.fingerprint}
                for i in bench.items if i.task == task]
        data = folder / "data" / f"{task}.jsonl"
        data.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
        text = _task_yaml(task, group, data.resolve())
        names.append(text.split("\n", 1)[0].split(": ", 1)[1])
        (folder / f"{names[-1]}.yaml").write_text(text, encoding="utf-8")
    (folder / f"{group}.yaml").write_text(f"group: {group}\ntask:\n" + "".join(f"  - {n}\n" for n in names)
                                          + "aggregate_metric_list:\n"
                                            f"  - metric: {METRIC}\n    aggregation: mean\n    weight_by_size: false\n",
                                          encoding="utf-8")
    (folder / "utils.py").write_text(UTILS_PY.format(version=LMMS_EXPORT_VERSION, metric=METRIC), encoding="utf-8")
    (folder / "hvbench_extraction.py").write_text(Path(extraction.__file__).read_text(encoding="utf-8"),
                                                  encoding="utf-8")
    return folder


def _reply(sample: dict) -> str | None:
    """The raw reply of an lmms-eval sample (resps may be nested one or two levels)."""
    value: Any = sample.get("resps")
    if value in (None, [], ""):
        value = sample.get("filtered_resps")
    while isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


class LmmsImportError(ValueError):
    """A sample file that cannot be imported; the message names the file and line."""


def read_samples(files: Sequence[str | Path]) -> list[tuple[str, int, dict]]:
    out = []
    for f in files:
        for n, line in enumerate(Path(f).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LmmsImportError(f"{f}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(sample, dict):
                raise LmmsImportError(f"{f}:{n}: not an lmms-eval sample (a JSON object per line)")
            out.append((str(f), n, sample))
    return out


def import_lmms_samples(warehouse: Warehouse, bench: LoadedBenchmark, files: Sequence[str | Path], model: str,
                        ) -> tuple[str, int, list[str]]:
    """Store lmms-eval replies as one run of `model` on `bench` (run id names lmms-eval and the model),
    parsed by the same rules as `hvbench eval`. Returns (run id, rows stored, warnings)."""
    by_qid = {i.question_id: i for i in bench.items}
    by_prompt = {letter_only_prompt(i): i for i in bench.items}
    settings = {"source": "lmms-eval", "model": model, "prompt": PROMPT_VERSION, "import": LMMS_IMPORT_VERSION}
    run_id = f"{bench.name}__lmms-{model}__{hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]}"
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    rows, warnings = [], []
    for f, n, sample in read_samples(files):
        # lmms-eval 0.7.3 logs the prompt as `input` (and the doc only when it has no media): either finds the item
        doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
        if "question_id" not in doc and not isinstance(sample.get("input"), str):
            raise LmmsImportError(f"{f}:{n}: not an lmms-eval sample of an hvbench task (no input prompt, no "
                                  "doc.question_id)")
        item = by_qid.get(doc["question_id"]) if "question_id" in doc else by_prompt.get(sample["input"])
        if item is None:
            what = doc.get("question_id") or repr(sample["input"][:80])
            warnings.append(f"{f}:{n}: question {what} is not in benchmark {bench.name} (or changed since the "
                            "export); skipped")
            continue
        if doc.get("item_hash") and doc["item_hash"] != item.fingerprint:
            warnings.append(f"{f}:{n}: question {item.question_id} changed since the export; skipped")
            continue
        text = _reply(sample)
        row = {"run_id": run_id, "arm": "full", "benchmark": bench.name, "task": item.task,
               "question_id": item.question_id, "rotation": 0, "item_hash": item.fingerprint,
               "n_options": item.n_options, "letters": item.letters, "options": [o.text for o in item.options],
               "answer": item.answer, "answer_original": item.answer, "response": text, "answered_at": now,
               "prompt_hash": hashlib.sha256(letter_only_prompt(item).encode()).hexdigest()[:16]}
        if text is None:
            rows.append({**row, "status": "failed", "method": "no_reply", "correct": False,
                         "error": f"{f}:{n}: no reply in the sample"})
            continue
        verdict = extract_option(text, [(o.letter, o.text) for o in item.options])
        rows.append({**row, "status": verdict.status, "method": verdict.method, "chosen": verdict.letter,
                     "chosen_original": verdict.letter, "correct": verdict.letter == item.answer})
    if not rows:
        return run_id, 0, warnings
    prov = {"backend": "lmms-eval", "model": model, "code_version": LMMS_IMPORT_VERSION}
    failed = sum(r["status"] == "failed" for r in rows)
    run = {"benchmark": bench.name, "benchmark_root": to_stored(bench.root), "benchmark_fingerprint": bench.fingerprint,
           "config": {**settings, "files": [str(f) for f in files]}, "n_items": len(rows),
           "n_answered": len(rows) - failed, "n_failed": failed, "load_issues": [], "updated_at": now,
           "status": "complete" if not failed else "partial"}
    warehouse.replace_tables([(EVAL_RESPONSES, {k: r[k] for k in EVAL_RESPONSES.key}, [r], prov) for r in rows]
                             + [(EVAL_RUNS, {"run_id": run_id}, [run], prov)])
    return run_id, len(rows), warnings
