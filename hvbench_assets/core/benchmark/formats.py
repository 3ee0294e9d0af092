"""The three formats of one exported benchmark: multiple choice (the export itself) and, written beside it from its
items with no model call, yes/no statements (`<name>_yesno`, core/benchmark/yesno.py) and open-ended items
(`<name>_open`, core/benchmark/open_ended.py). One table, so `hvbench eval --format` and the `benchmark_export` asset
write the same folders.

    folder, result = write_derived(bench, "yesno")     # the yes/no export of a loaded benchmark, written now
    format_of(folder)                                  # "mc" | "yesno" | "open" for an export of ours, else None
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hvbench_assets.core.benchmark.export import ExportResult, is_our_export
from hvbench_assets.core.benchmark.layout import LoadedBenchmark
from hvbench_assets.core.benchmark.open_ended import OPEN, OPEN_VERSION, export_open, open_folder
from hvbench_assets.core.benchmark.yesno import YESNO, YESNO_VERSION, export_yesno, yesno_folder

MC = "mc"
FORMAT_NAMES = {MC: "multiple choice", YESNO: "yes/no", OPEN: "open-ended"}
# format -> (where it goes beside the multiple-choice folder, its writer)
DERIVED: dict[str, tuple[Callable[[str | Path], Path], Callable[..., ExportResult]]] = {
    YESNO: (yesno_folder, export_yesno), OPEN: (open_folder, export_open)}
DERIVED_VERSIONS = f"{YESNO_VERSION}:{OPEN_VERSION}"


def write_derived(bench: LoadedBenchmark, fmt: str) -> tuple[Path, ExportResult]:
    """(folder, export result) of the `fmt` export of `bench`, written beside it now (the folder replaced whole)."""
    where, export = DERIVED[fmt]
    folder = where(bench.root)
    return folder, export(bench, folder)


def format_of(folder: str | Path) -> str | None:
    """The format of an export of ours (its manifest's `format`; the multiple-choice export has none), else None."""
    if not is_our_export(folder):
        return None
    return json.loads((Path(folder) / "manifest.json").read_text()).get("format") or MC
