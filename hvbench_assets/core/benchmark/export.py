"""Export the benchmark in the published HumanVBench layout: 16 task JSONL files, the question videos under
task-named folders (`Video` is relative to the export folder) and `manifest.json`.

Everything is written into a hidden sibling folder first and swapped into place at the end (one atomic
renameat2 exchange on Linux), so a failure (disk full, a killed process) leaves the previous export as it was;
the leftover temporary folder of a killed export is removed by the next one. A folder that was not written by this exporter is never replaced.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.layout import format_choices
from hvbench_assets.core.tasks.catalog import TASKS, task_info
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.processes import pid_alive

EXPORT_CODE_VERSION = "export-v2"  # v2: items record stored_answer and letter_order
GENERATOR = "hvbench benchmark_export"


class ExportError(RuntimeError):
    pass


@dataclass
class ExportResult:
    folder: Path
    items: list[dict[str, Any]]  # exported: question_id, task, jsonl, video, answer, review_state, leakage
    left_out: list[dict[str, Any]]  # question_id, task, reason
    counts: dict[str, int]
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)


def _place_video(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)  # same file system: no copy
    except OSError:
        shutil.copyfile(src, dst)


def recover(parent: Path, name: str) -> None:
    """A process killed between the two renames of the fallback swap left the previous export aside: put it back."""
    folder = parent / name
    if not folder.exists():
        aside = sorted(parent.glob(f".{name}.old-*"), key=lambda p: p.stat().st_mtime)
        if aside and is_our_export(aside[-1]):
            os.rename(aside[-1], folder)


def _remove_stale(parent: Path, name: str) -> None:
    recover(parent, name)
    for p in parent.glob(f".{name}.export-*"):
        try:
            pid = int(p.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            pid = -1
        if pid != os.getpid() and not pid_alive(pid):
            shutil.rmtree(p, ignore_errors=True)
    for p in parent.glob(f".{name}.old-*"):
        shutil.rmtree(p, ignore_errors=True)


def is_our_export(folder: str | Path) -> bool:
    """The folder holds a manifest.json written by this exporter."""
    try:
        return json.loads((Path(folder) / "manifest.json").read_text()).get("generator") == GENERATOR
    except (OSError, ValueError, AttributeError):
        return False


def exported_question_ids(folder: str | Path) -> set[str]:
    """Question ids listed in an export's manifest (empty when the folder is not ours)."""
    try:
        items = json.loads((Path(folder) / "manifest.json").read_text()).get("items") or []
    except (OSError, ValueError, AttributeError):
        return set()
    return {i["question_id"] for i in items}


def check_replaceable(folder: Path) -> None:
    """Refuse to replace a non-empty folder that holds no manifest of ours (a published benchmark, say)."""
    if not folder.exists():
        return
    if not is_our_export(folder) and any(folder.iterdir()):
        raise ExportError(f"{folder} exists and was not written by hvbench's export (no manifest.json of ours); "
                          "choose another benchmark name or move that folder away")


def export_benchmark(items: Sequence[Mapping[str, Any]], folder: str | Path, manifest: Mapping[str, Any],
                     ) -> ExportResult:
    """Write `items` (question_id, task, question, options [{letter, text}], answer, video_path, review_state,
    leakage; stored_answer and letter_order when the letters were assembled; `extra`: more fields of the line)
    to `folder`. An item without a readable question video is left out (named in the manifest);
    anything else that fails stops the export and leaves `folder` untouched."""
    folder = Path(folder)
    parent, name = folder.parent, folder.name
    parent.mkdir(parents=True, exist_ok=True)
    check_replaceable(folder)
    _remove_stale(parent, name)
    tmp = parent / f".{name}.export-{os.getpid()}-{int(time.time() * 1000)}"
    tmp.mkdir()
    try:
        result = _write(items, tmp, manifest)
        _swap(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result.folder = folder
    return result


def _write(items: Sequence[Mapping[str, Any]], tmp: Path, manifest: Mapping[str, Any]) -> ExportResult:
    lines: dict[str, list[str]] = {t.name: [] for t in TASKS}
    exported, left_out = [], []
    for item in items:
        info = task_info(item["task"])
        if info is None:
            left_out.append({"question_id": item["question_id"], "task": item["task"], "reason": "unknown task"})
            continue
        src = resolve(item.get("video_path"))
        if src is None or not src.is_file():
            left_out.append({"question_id": item["question_id"], "task": info.name,
                             "reason": item.get("video_error") or f"question video missing: {item.get('video_path')}"})
            continue
        rel = f"{info.name}/{info.name}_{len(lines[info.name]) + 1}{src.suffix or '.mp4'}"
        _place_video(src, tmp / rel)
        letters = [o["letter"] for o in item["options"]]
        record = {"Question": item["question"], "choices": format_choices([o["text"] for o in item["options"]]),
                  "Answer": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[letters.index(item["answer"])], "Video": rel,
                  "Question_id": item["question_id"], **(item.get("extra") or {})}
        lines[info.name].append(json.dumps(record, ensure_ascii=False))
        exported.append({"question_id": item["question_id"], "task": info.name, "jsonl": f"{info.name}.jsonl",
                         "video": rel, "answer": record["Answer"], "review_state": item.get("review_state"),
                         "leakage": item.get("leakage"), "stored_answer": item.get("stored_answer", item["answer"]),
                         "letter_order": item.get("letter_order") or letters})
    for task, task_lines in lines.items():
        (tmp / f"{task}.jsonl").write_text("".join(line + "\n" for line in task_lines), encoding="utf-8")
    counts = {task: len(task_lines) for task, task_lines in lines.items()}
    full = {"generator": GENERATOR, "code_version": EXPORT_CODE_VERSION,
            "exported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            **manifest, "counts": counts, "n_items": len(exported), "items": exported, "left_out": left_out}
    (tmp / "manifest.json").write_text(json.dumps(full, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    return ExportResult(tmp, exported, left_out, counts, full)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0


def _swap(tmp: Path, folder: Path) -> None:
    """Put `tmp` where `folder` is: one atomic exchange where the system has it (the old export is then in `tmp`
    and deleted); else the old export moves aside, the new one in, and the old one is deleted after."""
    if folder.exists() and _exchange(tmp, folder):
        shutil.rmtree(tmp, ignore_errors=True)
    elif folder.exists():
        old = folder.parent / f".{folder.name}.old-{os.getpid()}-{int(time.time() * 1000)}"
        os.rename(folder, old)
        try:
            os.rename(tmp, folder)
        except BaseException:
            os.rename(old, folder)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, folder)
