"""Per-task accuracy tables typed or copied by people (a paper's results table), read strictly.

Accepted: CSV, TSV or a Markdown pipe table with one row per model (first cell: its name) and a header
row of task names or acronyms; rows above that header (the paper's category row, a title) are skipped;
`Avg` / `Overall` columns are ignored (they are recomputed); markup such as `<u>42.9</u>`, `**42.9**`
or `42.9%` is stripped; `-`, `–`, `n/a` or an empty cell mean "not evaluated". JSON {model: {task: acc}}
works too. Anything else is a `ScoreTableError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from hvbench_assets.core.tasks.catalog import task_info

MISSING = {"", "-", "–", "—", "n/a", "na", "none", "null"}
IGNORED_COLUMNS = {"avg", "average", "mean", "overall", "all", "12 tasks", "16 tasks"}
_MARKUP = re.compile(r"</?[a-z]+>|\*\*|__|\*|`")


class ScoreTableError(ValueError):
    pass


def _clean(cell: str) -> str:
    return _MARKUP.sub("", cell).strip()


def _rows(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every non-blank row."""
    lines = text.splitlines()
    out = []
    if any(line.lstrip().startswith("|") for line in lines):
        for no, line in enumerate(lines, 1):
            line = line.strip()
            if not line.startswith("|") or re.fullmatch(r"[|\s:\-]+", line):
                continue  # prose around the table, or the |---| separator
            out.append((no, [c.strip() for c in line.strip("|").split("|")]))
        return out
    dialect = "excel-tab" if any("\t" in line for line in lines) else "excel"
    for no, cells in enumerate(csv.reader(lines, dialect=dialect), 1):
        if cells and any(c.strip() for c in cells):
            out.append((no, [c.strip() for c in cells]))
    return out


def _header_index(path: Path, rows: list[tuple[int, list[str]]]) -> int:
    for idx, (_, cells) in enumerate(rows[:6]):
        if sum(task_info(_clean(c)) is not None for c in cells[1:]) >= 2:
            return idx
    raise ScoreTableError(f"{path}: no header row naming tasks (e.g. ER, ETA, AR or Emotion_Recognition) "
                          "in the first rows")


def _value(path: Path, line: int, model: str, column: str, raw: str) -> float | None:
    text = _clean(raw).rstrip("%").strip()
    if text.lower() in MISSING:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ScoreTableError(f"{path}:{line}: model {model!r}, column {column}: {raw!r} is not a number "
                              "(use '-' for a task that was not evaluated)") from None
    if not 0.0 <= value <= 100.0:
        raise ScoreTableError(f"{path}:{line}: model {model!r}, column {column}: {value:g} is outside 0-100")
    return value


def read_score_table(path: str | Path) -> dict[str, dict[str, float | None]]:
    """Model -> task (canonical file-stem name) -> accuracy as written (percent or fraction), None = missing."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoreTableError(f"{path}: cannot read ({exc})") from None
    if path.suffix.lower() == ".json":
        return _from_json(path, text)
    rows = _rows(path, text)
    if not rows:
        raise ScoreTableError(f"{path}: empty table")
    h = _header_index(path, rows)
    header_line, header = rows[h]
    columns: dict[int, str] = {}
    for i, cell in enumerate(header[1:], 1):
        name = _clean(cell)
        info = task_info(name)
        if info is not None:
            if info.name in columns.values():
                raise ScoreTableError(f"{path}:{header_line}: task {name!r} appears twice in the header")
            columns[i] = info.name
        elif name and name.lower() not in IGNORED_COLUMNS:
            raise ScoreTableError(f"{path}:{header_line}: column {i + 1} header {name!r} is neither one of the 16 "
                                  "tasks (name or acronym) nor Avg/Overall")
    table: dict[str, dict[str, float | None]] = {}
    for line, cells in rows[h + 1:]:
        model = _clean(cells[0])
        if not model:
            raise ScoreTableError(f"{path}:{line}: row without a model name in its first cell")
        if model in table:
            raise ScoreTableError(f"{path}:{line}: model {model!r} appears twice")
        extra = [c for c in cells[len(header):] if _clean(c)]
        if len(cells) < len(header) or extra:
            raise ScoreTableError(f"{path}:{line}: model {model!r} has {len(cells) - 1} cells for "
                                  f"{len(header) - 1} header columns")
        table[model] = {task: _value(path, line, model, header[i], cells[i]) for i, task in columns.items()}
    if not table:
        raise ScoreTableError(f"{path}: header on line {header_line} but no model rows below it")
    return table


def _from_json(path: Path, text: str) -> dict[str, dict[str, float | None]]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ScoreTableError(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ScoreTableError(f"{path}: expected {{model: {{task: accuracy}}}}")
    out = {}
    for model, tasks in data.items():
        row = {}
        for task, value in tasks.items():
            info = task_info(str(task))
            if info is None:
                raise ScoreTableError(f"{path}: model {model!r}: {task!r} is not one of the 16 tasks")
            row[info.name] = _value(path, 0, model, str(task), "-" if value is None else str(value))
        out[str(model)] = row
    return out
