"""The yes/no format: two statements from each multiple-choice item, no model call.

One statement names the item's right option (truth "yes"), one names a distractor (truth "no"), chosen by a
generator seeded with the question id, so the same benchmark gives the same statements. Both read
"<question> Is the answer: <option text>?": option texts differ too much across the 16 tasks (a number, a time
range, "2-happy", a sentence) for one natural phrasing per task. Every item gives one of each, so "yes" is right
for exactly half of a task's statements. Which of an item's two ids (`<id>_s1`, `<id>_s2`) is the true one is
drawn by the same generator, so neither the id nor the file order gives the truth away.

In the published layout a statement is a two-option item (A: yes, B: no) with `Format: yesno` and
`Source_question_id` (and its source item's `Evidence` when it has one): HumanVBench tooling reads it as a 2-option
item, `hvbench eval` asks it as a yes/no question (core/evaluation/prompt.py) and reads the reply with `extract_yesno`.

    statements(bench)                    # -> [YesNoStatement], two per item
    export_yesno(bench, folder)          # -> ExportResult: folder/<Task>.jsonl, videos, manifest.json
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.export import ExportResult, export_benchmark
from hvbench_assets.core.benchmark.layout import BenchmarkItem, LoadedBenchmark

YESNO_VERSION = "yesno-v1"
FORMAT_FIELD = "Format"  # a field of the line, kept in BenchmarkItem.extra by the loader
YESNO = "yesno"
SOURCE_FIELD = "Source_question_id"
YES, NO = "yes", "no"
OPTIONS = (("A", YES), ("B", NO))


def is_yesno(item: BenchmarkItem) -> bool:
    return item.extra.get(FORMAT_FIELD) == YESNO


@dataclass(frozen=True)
class YesNoStatement:
    question_id: str
    task: str
    source_question_id: str
    option: str  # letter of the source option the statement names
    question: str
    truth: str  # yes | no
    video_path: Path


def statement_text(question: str, option_text: str) -> str:
    return f"{question} Is the answer: {option_text}?"


def _rng(question_id: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(f"{YESNO_VERSION}:{question_id}".encode()).digest()[:8], "big"))


def statements(bench: LoadedBenchmark) -> list[YesNoStatement]:
    """Two statements per item of `bench`, in its item order: the right option's and one distractor's."""
    out = []
    for item in bench.items:
        rng = _rng(item.question_id)
        distractor = rng.choice([o.letter for o in item.options if o.letter != item.answer])
        pair = [(item.answer, YES), (distractor, NO)]
        rng.shuffle(pair)
        for k, (letter, truth) in enumerate(pair, 1):
            out.append(YesNoStatement(f"{item.question_id}_s{k}", item.task, item.question_id, letter,
                                      statement_text(item.question, item.option_text(letter)), truth,
                                      item.video_path))
    return out


def balance(found: list[YesNoStatement]) -> dict[str, dict[str, int]]:
    """task -> {"yes": n, "no": n}: how often each is the right answer."""
    counts = Counter((s.task, s.truth) for s in found)
    return {t: {YES: counts[(t, YES)], NO: counts[(t, NO)]} for t in dict.fromkeys(s.task for s in found)}


def export_yesno(bench: LoadedBenchmark, folder: str | Path, manifest: Mapping[str, Any] | None = None) -> ExportResult:
    """Write the statements of `bench` in the published layout to `folder` (replaced whole, as the benchmark export
    does; its videos are linked, not copied, on the same file system)."""
    found = statements(bench)
    sources = {i.question_id: i for i in bench.items}
    items = [{"question_id": s.question_id, "task": s.task, "question": s.question,
              "options": [{"letter": letter, "text": text} for letter, text in OPTIONS],
              "answer": next(letter for letter, text in OPTIONS if text == s.truth), "video_path": str(s.video_path),
              "extra": {FORMAT_FIELD: YESNO, SOURCE_FIELD: s.source_question_id,
                        **sources[s.source_question_id].evidence}} for s in found]
    facts = {"format": YESNO, "format_version": YESNO_VERSION, "source": str(bench.root),
             "source_fingerprint": bench.fingerprint, "balance": balance(found),
             "statements": {s.question_id: {"source_question_id": s.source_question_id, "option": s.option,
                                             "truth": s.truth} for s in found}}
    return export_benchmark(items, folder, {**(manifest or {}), **facts})


def yesno_folder(source: str | Path) -> Path:
    """Where the yes/no export of the benchmark at `source` goes: beside it, `<name>_yesno`."""
    source = Path(source).resolve()
    return source.parent / f"{source.name}_{YESNO}"
