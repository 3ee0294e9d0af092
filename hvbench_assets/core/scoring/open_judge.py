"""The judge of open-ended answers: an OpenAI-compatible model compares a reply with the reference answer.

It is asked where the deterministic matcher (core/scoring/open_match.py) says ungradable, and also where the matcher
grades, so the report can say how often the two agree. The rubric below is the whole instruction; its reply must
start with RIGHT or WRONG, anything else leaves the item ungradable (counted wrong). Calls go through the MLLM
client like every model call, so they are logged and cached in `model_calls`: grading the same reply again asks
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from hvbench_assets.core.scoring.extraction import clean_response
from hvbench_assets.core.scoring.open_match import RIGHT, TIME_TOLERANCE_S, UNGRADABLE, WRONG, Grade

OPEN_JUDGE_PROMPT_VERSION = "open-judge-v1"
_VERDICT = re.compile(r"^\W*(right|correct|wrong|incorrect)\b", re.IGNORECASE)

RUBRIC = f"""You grade a reply to an open question about a video. You cannot see the video: judge only whether the
reply gives the same answer as the reference answer, which is correct.

RIGHT when the reply commits to the reference's answer: the same meaning in other words, synonyms, or extra detail
that does not contradict it. Numbers must be equal; times may differ by at most {TIME_TOLERANCE_S:g} s; a person
number must be the same; emotions and actions must be the same ones, in the same order when the reference gives an
order.
WRONG when the reply gives another answer, contradicts any part of the reference, leaves out part of an answer
that has several parts, hedges between answers, refuses, or says it cannot tell.

Reply with one word: RIGHT or WRONG."""


class TextAnswerer(Protocol):
    def answer(self, model: str, prompt: str, frames: Sequence[Any] = (), audio: Any = None) -> Any: ...


def open_judge_prompt(question: str, reference: str, reply: str) -> str:
    return f"{RUBRIC}\n\nQuestion: {question}\nReference answer: {reference}\nReply to grade:\n<<<\n{reply}\n>>>\nGrade:"


def judge_open(answerer: TextAnswerer, judge_model: str, question: str, reference: str, reply: str
               ) -> tuple[Grade, Any]:
    """(grade, raw judge result). A failed call or a reply not starting with RIGHT / WRONG is ungradable."""
    result = answerer.answer(judge_model, open_judge_prompt(question, reference, reply), (), None)
    text = clean_response(getattr(result, "text", None) or "")
    m = None if getattr(result, "error", None) else _VERDICT.match(text)
    if m is None:
        return Grade(UNGRADABLE, f"judge undecided: {text[:60]!r}"), result
    verdict = RIGHT if m.group(1).lower() in ("right", "correct") else WRONG
    return Grade(verdict, "judge"), result
