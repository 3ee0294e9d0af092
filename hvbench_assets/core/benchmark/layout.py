"""The published HumanVBench layout: one JSONL file per task, one multiple-choice item per line.

A line holds `Question`, `choices` (one string of blocks "Option A: {text}" separated by blank lines),
`Answer` (a letter), `Video` (path relative to the video root) and `Question_id`. The loader reads the
published files and our own export alike; a malformed line becomes a `LoadIssue` naming file and line
and is skipped, so nothing disappears without a trace.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from hvbench_assets.core.tasks.catalog import TASK_BY_NAME, task_info
from hvbench_assets.core.tasks.family import TaskFamily

REQUIRED_FIELDS = ("Question", "choices", "Answer", "Video", "Question_id")
# Our exports add what an item's truth rests on (core/benchmark/evidence.py); the formats derived from an export
# (yes/no, open-ended) carry their source item's.
EVIDENCE_FIELD = "Evidence"
LETTERS = string.ascii_uppercase
# "Option A:" at a line start; also tolerate "Option A." / full-width colon used by some exports.
_OPTION_MARK = re.compile(r"^[ \t]*Option[ \t]+([A-Z])[ \t]*[:：.)][ \t]?", re.MULTILINE)
_BARE_MARK = re.compile(r"^[ \t]*\(?([A-Z])[:：.)][ \t]+", re.MULTILINE)


class BenchmarkFormatError(ValueError):
    pass


@dataclass(frozen=True)
class Option:
    letter: str
    text: str


@dataclass(frozen=True)
class BenchmarkItem:
    task: str  # file stem, e.g. "Human_Count"
    question_id: str
    question: str
    options: tuple[Option, ...]
    answer: str  # letter of the right option
    video: str  # as written in the file, relative to the video root
    video_path: Path  # resolved absolute path (may not exist; the evaluator reports that)
    source: str = ""  # file the item was read from
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def letters(self) -> list[str]:
        return [o.letter for o in self.options]

    @property
    def n_options(self) -> int:
        return len(self.options)

    @property
    def info(self) -> TaskFamily | None:
        return task_info(self.task)

    def option_text(self, letter: str) -> str:
        return next(o.text for o in self.options if o.letter == letter)

    @property
    def evidence(self) -> dict[str, Any]:
        """{EVIDENCE_FIELD: its evidence} for a line derived from this item; {} when it has none (a published item)."""
        return {EVIDENCE_FIELD: self.extra[EVIDENCE_FIELD]} if self.extra.get(EVIDENCE_FIELD) else {}

    @property
    def fingerprint(self) -> str:
        """Content hash: a changed question, option set, answer or video makes a different item."""
        payload = json.dumps([self.task, self.question_id, self.question,
                              [(o.letter, o.text) for o in self.options], self.answer, self.video])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class LoadIssue:
    file: str
    line: int  # 1-based; 0 for a problem with the whole file
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass
class LoadedBenchmark:
    root: Path
    name: str
    items: list[BenchmarkItem]
    issues: list[LoadIssue]  # malformed lines, skipped
    warnings: list[LoadIssue]  # kept items with a problem (some videos missing, unknown task file)
    video_problem: str | None = None  # no video found, or several candidates: stop before asking any model
    video_folders: list[str] = field(default_factory=list)  # where the found videos are (for the log)

    @property
    def tasks(self) -> list[str]:
        return sorted({i.task for i in self.items}, key=_task_order)

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for item in self.items:
            h.update(item.fingerprint.encode())
        return h.hexdigest()[:16]


def _task_order(name: str) -> tuple[int, str]:
    names = list(TASK_BY_NAME)
    return (names.index(name), name) if name in TASK_BY_NAME else (len(names), name)


# -- choices -----------------------------------------------------------------------------------
def parse_choices(choices: str | Sequence[str]) -> tuple[Option, ...]:
    """Split the `choices` field into lettered options. Accepts the published string form
    ("Option A: ...\\n\\nOption B: ..."), lines "A. ..." and a JSON list of strings."""
    if isinstance(choices, (list, tuple)):
        texts = [str(c) for c in choices]
        marked = [_OPTION_MARK.match(t) or _BARE_MARK.match(t) for t in texts]
        if all(marked):
            pairs = [(m.group(1), t[m.end():]) for m, t in zip(marked, texts)]
        else:
            pairs = [(LETTERS[i], t) for i, t in enumerate(texts)]
    elif isinstance(choices, str):
        marks = list(_OPTION_MARK.finditer(choices)) or list(_BARE_MARK.finditer(choices))
        if not marks:
            raise BenchmarkFormatError("choices has no 'Option A:' blocks")
        if choices[: marks[0].start()].strip():
            raise BenchmarkFormatError("choices has text before the first option")
        ends = [m.start() for m in marks[1:]] + [len(choices)]
        pairs = [(m.group(1), choices[m.end():end]) for m, end in zip(marks, ends)]
    else:
        raise BenchmarkFormatError(f"choices must be a string or a list, got {type(choices).__name__}")
    options = tuple(Option(letter, _unbrace(" ".join(text.split()))) for letter, text in pairs)
    if len(options) < 2:
        raise BenchmarkFormatError(f"choices has {len(options)} option(s); need at least 2")
    expected = list(LETTERS[: len(options)])
    if [o.letter for o in options] != expected:
        raise BenchmarkFormatError(f"option letters {[o.letter for o in options]} are not {expected}")
    empty = [o.letter for o in options if not o.text]
    if empty:
        raise BenchmarkFormatError(f"option(s) {empty} have no text")
    return options


def _unbrace(text: str) -> str:
    """The published files wrap each option text in braces ("Option A: {3}"); the text is inside."""
    if len(text) >= 2 and text[0] == "{" and text[-1] == "}" and "{" not in text[1:-1] and "}" not in text[1:-1]:
        return text[1:-1].strip()
    return text


def format_choices(options: Iterable[Option | str]) -> str:
    """The published string form, "Option A: {text}" blocks separated by blank lines plus the trailing
    blank block; the reference evaluation script reads the text between the braces and counts options
    as blocks minus one. Plain strings get letters A, B, C... in order."""
    blocks = []
    for i, opt in enumerate(options):
        letter, text = (opt.letter, opt.text) if isinstance(opt, Option) else (LETTERS[i], str(opt))
        blocks.append(f"Option {letter}: {{{' '.join(text.replace('{', '(').replace('}', ')').split())}}}")
    return "\n\n".join(blocks) + "\n\n"


def normalize_answer(value: Any, options: Sequence[Option] = ()) -> str:
    """'B', ' b ', '(B)', 'B.', 'Option B', 'B. happy' -> 'B'; an option's exact text -> its letter;
    anything else raises."""
    text = " ".join(str(value).split())
    m = re.fullmatch(r"(?:Option\s+)?\(?([A-Za-z])\)?[.:：]?", text) or \
        re.match(r"(?:Option\s+)?\(?([A-Z])\)?[.:：)]\s+\S", text)
    if m:
        return m.group(1).upper()
    by_text = [o.letter for o in options if o.text == _unbrace(text)]
    if len(by_text) == 1:
        return by_text[0]
    raise BenchmarkFormatError(f"Answer {text!r} is not an option letter")


# -- loading -----------------------------------------------------------------------------------
def find_task_files(root: Path) -> list[Path]:
    """Task files under `root`: a single .jsonl, the .jsonl files in root, else any below it."""
    if root.is_file():
        return [root]
    files = sorted(root.glob("*.jsonl")) or sorted(root.rglob("*.jsonl"))
    return sorted(files, key=lambda p: _task_order(p.stem))


def parse_line(raw: str, task: str, video_roots: Sequence[Path], source: str, line_no: int) -> BenchmarkItem:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise BenchmarkFormatError(f"expected a JSON object, got {type(obj).__name__}")
    missing = [f for f in REQUIRED_FIELDS if f not in obj or obj[f] is None or str(obj[f]).strip() == ""]
    if missing:
        raise BenchmarkFormatError(f"missing field(s) {missing}")
    options = parse_choices(obj["choices"])
    answer = normalize_answer(obj["Answer"], options)
    if answer not in [o.letter for o in options]:
        raise BenchmarkFormatError(f"Answer {answer!r} is not one of the options {[o.letter for o in options]}")
    video = str(obj["Video"]).strip()
    return BenchmarkItem(
        task=task, question_id=str(obj["Question_id"]).strip(), question=str(obj["Question"]).strip(),
        options=options, answer=answer, video=video, video_path=resolve_video(video, video_roots),
        source=source, line=line_no, extra={k: v for k, v in obj.items() if k not in REQUIRED_FIELDS},
    )


def resolve_video(video: str, roots: Sequence[Path]) -> Path:
    """First root under which the relative path exists; else the first root's candidate."""
    rel = Path(video)
    if rel.is_absolute():
        return rel
    for root in roots:
        if (root / rel).exists():
            return (root / rel).resolve()
    return (roots[0] / rel).resolve()


# Where published and home-made benchmarks keep their videos, relative to the benchmark folder (base),
# the folder of the task file (dir) and the task name: side by side, a `videos/` folder, task-named folders.
VIDEO_FOLDERS = ("{base}", "{dir}", "{dir}/..", "{base}/videos", "{dir}/videos", "{dir}/../videos",
                 "{base}/videos/{task}", "{base}/{task}", "{dir}/{task}", "{dir}/../videos/{task}")
GIVEN_ROOT_FOLDERS = ("{root}", "{root}/{task}")


def candidate_folders(item: BenchmarkItem, base: Path, video_root: Path | None) -> list[Path]:
    return list(_folders(item.source, item.task, base, video_root))


@lru_cache(maxsize=256)
def _folders(source: str, task: str, base: Path, video_root: Path | None) -> tuple[Path, ...]:
    d = Path(source).parent if source else base
    patterns = GIVEN_ROOT_FOLDERS if video_root is not None else VIDEO_FOLDERS
    folders = [Path(p.format(base=base, dir=d, task=task, root=video_root)) for p in patterns]
    return tuple(dict.fromkeys(f.resolve() for f in folders))


def locate_videos(items: list[BenchmarkItem], base: Path, video_root: Path | None,
                  ) -> tuple[list[BenchmarkItem], list[LoadIssue], str | None, list[str]]:
    """Resolve every item's `Video` among the usual folders. Unambiguous when each found video is one
    file; returns (items with video_path set, warnings, a problem that must stop the run, folders used)."""
    resolved, missing, ambiguous, used = [], [], [], {}
    for item in items:
        rel = Path(item.video)
        if rel.is_absolute():
            hits = [rel] if rel.exists() else []
        else:
            hits = list(dict.fromkeys((f / rel).resolve() for f in _folders(item.source, item.task, base, video_root)
                                      if os.path.isfile(f / rel)))
        if len(hits) > 1:
            ambiguous.append((item, hits))
        if not hits:
            missing.append(item)
            hits = [(candidate_folders(item, base, video_root)[0] / rel).resolve()]
        else:
            used[str(_folder_of(hits[0], item.video))] = True
        resolved.append(replace(item, video_path=hits[0]))
    where = f"under {video_root}" if video_root is not None else "beside the task files, in videos/ or task-named folders"
    if ambiguous:
        item, hits = ambiguous[0]
        return resolved, [], (f"{len(ambiguous)} video(s) exist in more than one place, e.g. {item.video!r} "
                              f"at {hits[0]} and {hits[1]}: the video folder is ambiguous"), list(used)
    if items and len(missing) == len(items):
        looked = ", ".join(str(f) for f in candidate_folders(items[0], base, video_root))
        return resolved, [], (f"none of the {len(items)} videos was found {where} (e.g. {items[0].video!r}; "
                              f"looked in {looked})"), []
    warnings = []
    if missing:
        sample = ", ".join(repr(i.video) for i in missing[:3])
        warnings.append(LoadIssue(missing[0].source, missing[0].line, f"{len(missing)} of {len(items)} videos not "
                                  f"found {where} ({sample}{', …' if len(missing) > 3 else ''}); those items fail"))
    return resolved, warnings, None, list(used)


def _folder_of(path: Path, video: str) -> Path:
    """The folder `video` (a relative path) was found under."""
    return path.parents[len(Path(video).parts) - 1]


def load_benchmark(root: str | Path, video_root: str | Path | None = None,
                   tasks: Iterable[str] | None = None, name: str | None = None) -> LoadedBenchmark:
    """Read every task file under `root`. Videos resolve against `video_root` (or its task-named
    sub-folders), else they are looked for in VIDEO_FOLDERS (beside the task files, `videos/`,
    task-named folders); `video_problem` says when none is found or one exists in two places."""
    root = Path(root).resolve()
    base = root.parent if root.is_file() else root
    wanted = {task_info(t).name if task_info(t) else t for t in tasks} if tasks else None
    items: list[BenchmarkItem] = []
    issues: list[LoadIssue] = []
    warnings: list[LoadIssue] = []
    files = find_task_files(root) if root.exists() else []
    if not files:
        issues.append(LoadIssue(str(root), 0, "no .jsonl task files found"))
    for path in files:
        info = task_info(path.stem)
        task = info.name if info else path.stem
        if wanted is not None and task not in wanted:
            continue
        if info is None:
            warnings.append(LoadIssue(str(path), 0, "file name is not one of the 16 HumanVBench tasks; "
                                                    "reported on its own, outside the category averages"))
        roots = [base]  # placeholder: locate_videos resolves every video once all items are read
        seen: dict[str, int] = {}
        for line_no, raw in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                item = parse_line(raw, task, roots, str(path), line_no)
            except BenchmarkFormatError as exc:
                issues.append(LoadIssue(str(path), line_no, str(exc)))
                continue
            if item.question_id in seen:
                issues.append(LoadIssue(str(path), line_no, f"duplicate Question_id {item.question_id!r} "
                                                            f"(first on line {seen[item.question_id]})"))
                continue
            seen[item.question_id] = line_no
            items.append(item)
    given = Path(video_root).resolve() if video_root else None
    items, video_warnings, problem, folders = locate_videos(items, base, given)
    return LoadedBenchmark(root=root, name=name or base.name, items=items, issues=issues,
                           warnings=warnings + video_warnings, video_problem=problem, video_folders=folders)


# -- writing (our export in the same layout) ---------------------------------------------------
def item_record(item: BenchmarkItem) -> dict[str, Any]:
    return {"Question": item.question, "choices": format_choices(item.options), "Answer": item.answer,
            "Video": item.video, "Question_id": item.question_id, **item.extra}


def write_benchmark(root: str | Path, items: Iterable[BenchmarkItem]) -> list[Path]:
    """Write one JSONL per task under `root` (atomic per file). Videos are the caller's business:
    `Video` must already be relative to `root`."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[BenchmarkItem]] = {}
    for item in items:
        by_task.setdefault(item.task, []).append(item)
    written = []
    for task in sorted(by_task, key=_task_order):
        path = root / f"{task}.jsonl"
        tmp = path.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for item in by_task[task]:
                fh.write(json.dumps(item_record(item), ensure_ascii=False) + "\n")
        tmp.replace(path)
        written.append(path)
    return written
