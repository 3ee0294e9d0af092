"""The letter-only prompt (same intent as the paper's evaluation prompt; our own wording)."""

from __future__ import annotations

from hvbench_assets.core.benchmark.layout import BenchmarkItem

PROMPT_VERSION = "letter-only-v1"


def letter_only_prompt(item: BenchmarkItem) -> str:
    return (
        "Watch the video and pick the single best option for the multiple-choice question below. "
        "Reply with the option's letter only.\n\n"
        f"Question: {item.question}\n\n"
        + "\n\n".join(f"Option {o.letter}: {o.text}" for o in item.options) + "\n\n"
        "Reply with one letter. Your option:"
    )
