"""HumanVBench layout: JSONL loader (file+line errors) and writer. Task names and categories are the task
catalog's (core/tasks/catalog.py)."""

from hvbench_assets.core.benchmark.layout import (
    BenchmarkFormatError,
    BenchmarkItem,
    LoadedBenchmark,
    LoadIssue,
    Option,
    format_choices,
    load_benchmark,
    parse_choices,
    write_benchmark,
)

__all__ = [
    "BenchmarkFormatError", "BenchmarkItem", "LoadIssue", "LoadedBenchmark", "Option", "format_choices",
    "load_benchmark", "parse_choices", "write_benchmark",
]
