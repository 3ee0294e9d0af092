"""The open-ended format: each multiple-choice item asked without its options, no model call to make it.

The reference answer is the right option's text; where the task writes that text in a fixed form (the task
catalog's `answer_kind`: a count, a second, a second range, a person number, "number-emotion", emotion words, an
emotion sequence, an attitude) the structured truth is read from it by core/scoring/open_match.py (imported up a
floor on purpose: the parser of the truth and the matcher that grades against it are one leaf module, so they
cannot drift apart), and the matcher grades replies against it. Elsewhere (descriptions, actions, causes, speech) the reference is the text alone and
only the judge grades (core/scoring/open_judge.py).

In the published layout an open item keeps its source line (same Question_id, `choices`, `Answer`, so HumanVBench
tooling still reads it; its `Evidence` too) and adds `Format: open`, `Reference`, `Truth_kind` and `Truth`;
`hvbench eval` asks it with the open prompt (core/evaluation/prompt.py), which shows no options.

    open_items(bench)               # -> [OpenItem], one per item
    export_open(bench, folder)      # -> ExportResult: folder/<Task>.jsonl, videos, manifest.json
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.export import ExportResult, export_benchmark
from hvbench_assets.core.benchmark.layout import BenchmarkItem, LoadedBenchmark
from hvbench_assets.core.benchmark.yesno import FORMAT_FIELD
from hvbench_assets.core.scoring.open_match import OPEN_MATCH_VERSION, parse_truth

OPEN_VERSION = "open-v1"
OPEN = "open"
REFERENCE_FIELD, KIND_FIELD, TRUTH_FIELD = "Reference", "Truth_kind", "Truth"
TEXT = "text"
# what the prompt asks for, per answer kind: a reply in the truth's form can be graded without the judge
ANSWER_HINTS = {"count": "Answer with a number.", "time": "Answer with the second.",
                "time_span": "Answer with the start and end second.",
                "person": "Answer with the number drawn on the person's box.",
                "person_emotion": "Answer with the person's number and the emotion, for example \"2-happy\".",
                "emotion": "Answer with the emotion(s) in a few words.",
                "emotion_sequence": "Answer with the emotions in the order they occur.",
                "attitude": "Answer with positive, negative, neutral or indeterminate.",
                TEXT: "Answer in one sentence."}


def is_open(item: BenchmarkItem) -> bool:
    return item.extra.get(FORMAT_FIELD) == OPEN


@dataclass(frozen=True)
class OpenItem:
    item: BenchmarkItem  # the source item
    reference: str  # the right option's text
    kind: str  # the catalog's answer kind, or "text" when the option is not in that kind's form
    truth: Any  # the structured value (open_match.parse_truth), None for text


def open_item(item: BenchmarkItem) -> OpenItem:
    reference = item.option_text(item.answer)
    kind = item.info.answer_kind if item.info else TEXT
    truth = parse_truth(kind, reference) if kind != TEXT else None
    return OpenItem(item, reference, kind if truth is not None else TEXT, truth)


def open_items(bench: LoadedBenchmark) -> list[OpenItem]:
    return [open_item(i) for i in bench.items]


def truth_of(item: BenchmarkItem) -> tuple[str, Any, str]:
    """(kind, structured truth, reference) of an item of an open export."""
    return item.extra.get(KIND_FIELD) or TEXT, item.extra.get(TRUTH_FIELD), item.extra.get(REFERENCE_FIELD) or ""


def kinds(found: list[OpenItem]) -> dict[str, dict[str, int]]:
    """task -> {answer kind: items}: how many items the matcher can grade (every kind but text)."""
    counts = Counter((o.item.task, o.kind) for o in found)
    return {t: {k: n for (task, k), n in sorted(counts.items()) if task == t}
            for t in dict.fromkeys(o.item.task for o in found)}


def export_open(bench: LoadedBenchmark, folder: str | Path, manifest: Mapping[str, Any] | None = None) -> ExportResult:
    """Write the open items of `bench` in the published layout to `folder` (replaced whole; videos linked)."""
    found = open_items(bench)
    items = [{"question_id": o.item.question_id, "task": o.item.task, "question": o.item.question,
              "options": [{"letter": x.letter, "text": x.text} for x in o.item.options], "answer": o.item.answer,
              "video_path": str(o.item.video_path),
              "extra": {FORMAT_FIELD: OPEN, REFERENCE_FIELD: o.reference, KIND_FIELD: o.kind, TRUTH_FIELD: o.truth,
                        **o.item.evidence}}
             for o in found]
    facts = {"format": OPEN, "format_version": OPEN_VERSION, "match_version": OPEN_MATCH_VERSION,
             "source": str(bench.root), "source_fingerprint": bench.fingerprint, "answer_kinds": kinds(found)}
    return export_benchmark(items, folder, {**(manifest or {}), **facts})


def open_folder(source: str | Path) -> Path:
    """Where the open export of the benchmark at `source` goes: beside it, `<name>_open`."""
    source = Path(source).resolve()
    return source.parent / f"{source.name}_{OPEN}"
