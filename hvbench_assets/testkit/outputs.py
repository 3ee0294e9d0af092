"""A fingerprint of what a run produced (warehouse tables, export folders, reports), for checking that a refactor
changes no output: benchmarks/outputs_unchanged.py runs the demo at two revisions and compares their fingerprints.

What is left out is what legitimately differs between two identical runs or two checkouts: times and latencies,
absolute paths (the data folder's and the code's own locations), run, call and completion ids, the code versions (a refactor may bump one without changing a
row; they are compared apart, `code_versions`). Everything else is hashed row by row, rows sorted, so a table
differs exactly when some row's content does.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import duckdb

VOLATILE_COLUMNS = frozenset({"first_seen", "mtime", "code_version", "call_id", "call_ids", "run_id", "elapsed_s",
                              "seconds", "latency_s"})  # and every `*_at` column (a time)
TEXT_SUFFIXES = {".json", ".jsonl", ".md", ".csv", ".txt", ".html", ".svg", ".yaml"}
_VOLATILE_TEXT = [  # (pattern, stand-in): a wall-clock time, a Dagster run id in a path, an OpenAI reply's id and time
    (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?"), "<time>"),
    (re.compile(r"run-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "run-<id>"),
    (re.compile(r'"id": "chatcmpl-[\w-]+"'), '"id": "<id>"'),
    (re.compile(r'"created": \d+'), '"created": 0'),
]


def volatile(column: str) -> bool:
    return column in VOLATILE_COLUMNS or column.endswith("_at")


def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _neutral(text: str, roots: dict[str, Path]) -> str:
    """Text with the named folders' locations and the volatile patterns taken out."""
    for name, root in roots.items():
        text = text.replace(str(root.resolve()), f"<{name}>").replace(str(root), f"<{name}>")
    for pattern, stand_in in _VOLATILE_TEXT:
        text = pattern.sub(stand_in, text)
    return text


def _drop_keys(value):
    if isinstance(value, dict):
        return {k: _drop_keys(v) for k, v in value.items() if not volatile(k)}
    if isinstance(value, list):
        return [_drop_keys(v) for v in value]
    return value


def table_fingerprints(db: Path, roots: dict[str, Path]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Per table: a digest of its rows (volatile columns left out, rows sorted), and the code versions it holds."""
    out, versions = {}, {}
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        for t in tables:
            cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                              "ORDER BY ordinal_position", [t]).fetchall()]
            kept = [c for c in cols if not volatile(c)]
            rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in kept)} FROM "{t}"').fetchall() if kept else []
            out[f"table:{t}"] = _digest(sorted(_neutral(repr(r), roots) for r in rows))
            if "code_version" in cols:
                versions[t] = sorted({str(v) for (v,) in con.execute(f'SELECT DISTINCT code_version FROM "{t}"').fetchall()})
    return out, versions


def file_fingerprint(path: Path, roots: dict[str, Path]) -> str:
    """Text files without times, paths and volatile JSON keys; anything else byte for byte."""
    if path.suffix not in TEXT_SUFFIXES:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    text = path.read_text(errors="replace")
    if path.suffix in (".json", ".jsonl"):
        try:
            lines = [json.loads(x) for x in text.splitlines() if x.strip()] if path.suffix == ".jsonl" else [json.loads(text)]
            text = "\n".join(json.dumps(_drop_keys(x), sort_keys=True) for x in lines)
        except ValueError:
            pass
    return _digest([_neutral(text, roots)])


def fingerprint(data_dir: Path, code: Path | None = None, folders: tuple[str, ...] = ("benchmarks", "reports")) -> dict:
    """What a run left in a data folder: every warehouse table and every file under `folders`. `code`: the checkout
    that ran (its location shows in messages that name a config file)."""
    data_dir = Path(data_dir)
    roots = {"data": data_dir, **({"code": Path(code)} if code else {})}
    entries: dict[str, str] = {}
    versions: dict[str, list[str]] = {}
    for db in sorted(data_dir.glob("*.duckdb")):
        t, v = table_fingerprints(db, roots)
        entries.update({f"{db.name}/{k}": d for k, d in t.items()})
        versions.update(v)
    for folder in folders:
        for f in sorted((data_dir / folder).rglob("*")):
            if f.is_file():
                entries[f"file:{f.relative_to(data_dir)}"] = file_fingerprint(f, roots)
    return {"entries": entries, "code_versions": versions}


def differences(before: dict, after: dict) -> list[str]:
    """Lines naming each entry that changed, appeared or went, then the code versions that changed."""
    a, b = before["entries"], after["entries"]
    lines = [f"changed: {k}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    lines += [f"only before: {k}" for k in sorted(a.keys() - b.keys())]
    lines += [f"only after: {k}" for k in sorted(b.keys() - a.keys())]
    va, vb = before.get("code_versions", {}), after.get("code_versions", {})
    lines += [f"code version of {t}: {va.get(t)} -> {vb.get(t)}" for t in sorted(va.keys() | vb.keys()) if va.get(t) != vb.get(t)]
    return lines
