"""Optional LLM judge for replies the deterministic rules could not map to a letter.

The judge sees the question, the lettered options and the reply, and must answer with one letter or
NONE; its own reply goes through the strict rules again, so a rambling judge cannot invent a choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from hvbench_assets.core.scoring.extraction import (
    PARSED,
    UNPARSED,
    Extraction,
    clean_response,
    extract_option,
)

JUDGE_PROMPT_VERSION = "judge-v1"


class TextAnswerer(Protocol):
    def answer(self, model: str, prompt: str, frames: Sequence[Any] = (), audio: Any = None) -> Any: ...


def judge_prompt(question: str, options: Sequence[tuple[str, str]], reply: str) -> str:
    listed = "\n".join(f"{letter}. {text}" for letter, text in options)
    return (
        "You map a model's reply to a multiple-choice question onto the option it picked.\n"
        f"Question: {question}\nOptions:\n{listed}\n"
        f"Reply to classify:\n<<<\n{reply}\n>>>\n"
        "If the reply clearly commits to exactly one option, output that option's letter only. "
        "If it refuses, hedges between options or commits to none, output NONE."
    )


def judge_option(answerer: TextAnswerer, judge_model: str, question: str,
                 options: Sequence[tuple[str, str]], reply: str) -> tuple[Extraction, Any]:
    """(extraction, raw judge result). A failed or undecided judge leaves the reply unparsed."""
    result = answerer.answer(judge_model, judge_prompt(question, options, reply), (), None)
    text = getattr(result, "text", None) or ""
    if getattr(result, "error", None) or clean_response(text).upper().startswith("NONE"):
        return Extraction(None, UNPARSED, "judge_none"), result
    verdict = extract_option(text, [(letter, "") for letter, _ in options])  # letters only, no text matching
    if verdict.status == PARSED and verdict.method in ("bare_letter", "answer_phrase", "leading_letter"):
        return Extraction(verdict.letter, PARSED, "judge"), result
    return Extraction(None, UNPARSED, "judge_none"), result
