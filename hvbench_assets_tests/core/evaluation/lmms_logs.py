"""lmms-eval sample logs as lmms-eval 0.7.3 writes them, made from an `hvbench lmms-export` task folder (no lmms-eval
needed), and the folder's own hooks loaded as a module."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path


def task_utils(folder: Path):
    spec = importlib.util.spec_from_file_location("lmms_task_utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lmms_tasks(folder: Path) -> dict[str, str]:
    """data file stem -> lmms-eval task name, read from the exported task YAMLs."""
    out = {}
    for y in folder.glob("*.yaml"):
        text = y.read_text()
        data = re.search(r"test: \"(.+)\"", text)
        if data:
            out[Path(data.group(1)).stem] = re.match(r"task: (\S+)", text).group(1)
    return out


def lmms_sample_log(folder: Path, replies: dict[str, str], out: Path, doc_ids: bool = True) -> list[Path]:
    """Sample logs as lmms-eval 0.7.3 writes them with --log_samples: one file per task named
    <date>_samples_<task>.jsonl, one line per doc (its index in the data file as `doc_id`, the prompt as `input`,
    the reply as `filtered_resps`, the metrics; no doc, no task name)."""
    utils = task_utils(folder)
    tasks = lmms_tasks(folder)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for data in sorted((folder / "data").glob("*.jsonl")):
        docs = [json.loads(line) for line in data.read_text().splitlines()]
        path = out / f"20261126_000000_samples_{tasks[data.stem]}.jsonl"
        lines = []
        for i, d in enumerate(docs):
            reply = replies[d["question_id"]]
            lines.append(json.dumps({**({"doc_id": i} if doc_ids else {}), "target": d["answer"], "filtered_resps": reply,
                                     "token_counts": [{"input_tokens": 49, "output_tokens": 2, "reasoning_tokens": 0}],
                                     **utils.process_results(d, [reply]), "input": utils.doc_to_text(d)}))
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files
