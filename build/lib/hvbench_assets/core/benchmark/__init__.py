"""HumanVBench layout: task names and categories, JSONL loader (file+line errors), writer."""

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
from hvbench_assets.core.benchmark.tasks import (
    AUDIO_TASKS,
    CATEGORIES,
    TASKS,
    TaskInfo,
    task_info,
)

__all__ = [
    "AUDIO_TASKS", "CATEGORIES", "TASKS", "BenchmarkFormatError", "BenchmarkItem", "LoadIssue",
    "LoadedBenchmark", "Option", "TaskInfo", "format_choices", "load_benchmark", "parse_choices",
    "task_info", "write_benchmark",
]
