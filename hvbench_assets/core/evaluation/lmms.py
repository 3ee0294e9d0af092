"""lmms-eval interop: export a benchmark as an lmms-eval task folder.

The export is plain files (no lmms-eval import here): one JSONL of docs per task (question, options, the
exact prompt `hvbench eval` sends, letter-only, yes/no or open, the video's absolute path; an open item's reference
and structured truth; the item's `evidence` when the export has one, never in the prompt), one task YAML per task,
a group YAML, `utils.py` (doc_to_visual / doc_to_text / process_results) and copies of core/scoring/extraction.py and open_match.py (with the emotion words it reads), so
lmms-eval scores replies by the same rules as `hvbench eval` (open items: the matcher only, no judge).

    export_lmms_task(bench, out_dir)         # -> out_dir/<group>/...; run: lmms-eval --include_path out_dir --tasks <group>

Importing the sample logs back is core/evaluation/lmms_samples.py; both read the task names and the doc order
(`task_items`: lmms-eval's `doc_id` is an index into it) from here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hvbench_assets.core.benchmark.layout import EVIDENCE_FIELD, BenchmarkItem, LoadedBenchmark
from hvbench_assets.core.tasks.catalog import task_info
from hvbench_assets.core.benchmark.open_ended import OPEN, is_open, truth_of
from hvbench_assets.core.benchmark.yesno import YESNO, is_yesno
from hvbench_assets.core.evaluation.prompt import arm_prompt
from hvbench_assets.core.scoring import extraction, open_match
from hvbench_assets.core.synthesis import words

# v2: yes/no items (doc format) read by extract_yesno; v3: open items; v4: a doc carries its item's evidence
LMMS_EXPORT_VERSION = "lmms-task-v4"
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
sys.path.insert(0, _HERE)  # hvbench_open_match.py imports hvbench_words.py beside it (outside hvbench)
_spec = importlib.util.spec_from_file_location("hvbench_open_match", os.path.join(_HERE, "hvbench_open_match.py"))
open_match = sys.modules.setdefault("hvbench_open_match", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(open_match)


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
    if doc.get("format") == "open":  # the matcher only: lmms-eval runs no judge, free text stays ungradable
        verdict = open_match.grade(doc["kind"], doc["truth"], reply or "").verdict
        return {{"{metric}": float(verdict == open_match.RIGHT),
                 "hvbench_unparsed": float(verdict == open_match.UNGRADABLE)}}
    read = extraction.extract_yesno if doc.get("format") == "yesno" else extraction.extract_option
    verdict = read(reply or "", list(zip(doc["letters"], doc["options"])))
    return {{"{metric}": float(verdict.letter == doc["answer"]),
             "hvbench_unparsed": float(verdict.status != extraction.PARSED)}}
'''


def lmms_task_name(group: str, task: str) -> str:
    """The lmms-eval task of one hvbench task, e.g. hvbench_mybench_er; its sample log is <date>_samples_<this>.jsonl."""
    return f"{group}_{task_info(task).abbrev.lower() if task_info(task) else task.lower()}"


def task_items(bench: LoadedBenchmark, task: str) -> list[BenchmarkItem]:
    """The items of `task` in the order of its data file: lmms-eval's `doc_id` is the index in this list."""
    return [i for i in bench.items if i.task == task]


def _task_yaml(task: str, group: str, data: Path, prompt_version: str) -> str:
    return (f"task: {lmms_task_name(group, task)}\n"
            f"dataset_path: json\n"
            f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
            "test_split: test\noutput_type: generate_until\n"
            "doc_to_visual: !function utils.doc_to_visual\ndoc_to_text: !function utils.doc_to_text\n"
            "doc_to_target: !function utils.doc_to_target\nprocess_results: !function utils.process_results\n"
            "generation_kwargs:\n  max_new_tokens: 16\n  temperature: 0\n  do_sample: false\n"
            f"metric_list:\n  - metric: {METRIC}\n    aggregation: mean\n    higher_is_better: true\n"
            "  - metric: hvbench_unparsed\n    aggregation: mean\n    higher_is_better: false\n"
            f"metadata:\n  version: 1\n  hvbench_task: {task}\n  prompt: {prompt_version}\n")


def item_format(item: BenchmarkItem) -> str:
    return YESNO if is_yesno(item) else OPEN if is_open(item) else "mc"


def _open_fields(item: BenchmarkItem) -> dict:
    kind, truth, reference = truth_of(item)
    return {"kind": kind, "truth": truth, "reference": reference} if is_open(item) else {}


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
        items = task_items(bench, task)
        docs = [{"question_id": i.question_id, "task": i.task, "question": i.question, "format": item_format(i),
                 "letters": i.letters, "options": [o.text for o in i.options], "answer": i.answer,
                 "video": str(Path(i.video_path).resolve()), "prompt": arm_prompt(i, "full")[0], "item_hash": i.fingerprint,
                 **_open_fields(i), **({"evidence": i.extra[EVIDENCE_FIELD]} if i.evidence else {})}
                for i in items]
        data = folder / "data" / f"{task}.jsonl"
        data.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
        names.append(lmms_task_name(group, task))
        (folder / f"{names[-1]}.yaml").write_text(_task_yaml(task, group, data.resolve(), arm_prompt(items[0], "full")[1]), encoding="utf-8")
    (folder / f"{group}.yaml").write_text(f"group: {group}\ntask:\n" + "".join(f"  - {n}\n" for n in names)
                                          + "aggregate_metric_list:\n"
                                            f"  - metric: {METRIC}\n    aggregation: mean\n    weight_by_size: false\n",
                                          encoding="utf-8")
    (folder / "utils.py").write_text(UTILS_PY.format(version=LMMS_EXPORT_VERSION, metric=METRIC), encoding="utf-8")
    for name, module in (("hvbench_extraction.py", extraction), ("hvbench_open_match.py", open_match),
                         ("hvbench_words.py", words)):
        (folder / name).write_text(Path(module.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    return folder
