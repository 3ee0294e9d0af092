"""Reading replies in the chain's forms, strictly: JSON objects with the keys a step asks for, one-sentence
answers, number-emotion answers. A writer reply that does not parse is asked again once (`parsed_call`),
with a note saying why, so the retry is a new request rather than the cached first reply."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hvbench_assets.core.mllm.client import ChatResult
from hvbench_assets.core.synthesis.forms import answer_form
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.replies import BadReply, json_object, person_sentence

__all__ = ["BadReply", "Stop", "answer_form", "distractor_list", "flagged", "parse_answer", "parsed_call",
           "question_answer", "retry_note"]


class Stop(Exception):
    """The chain ends here with this Pending (rejected or failed)."""

    def __init__(self, status: str, rule: str, reason: str):
        super().__init__(reason)
        self.status, self.rule, self.reason = status, rule, reason


def retry_note(reason: str) -> str:
    return f"\nYour previous reply could not be used ({reason}). Reply again in exactly the requested format."


def parsed_call(log: StepLog, step: str, call: Callable[[str], ChatResult], parse: Callable[[str | None], Any],
                what: str) -> tuple[ChatResult, Any, int]:
    """A writer call whose reply must parse and pass `parse`'s checks (BadReply names the problem); an unusable
    reply is asked again once with a note saying why (so the retry is a new request), then the chain fails
    keeping the raw text of both attempts. Task builds outside the chain (SCM, AST) use it too."""
    feedback, raws = "", []
    for attempt in (1, 2):
        r = call(feedback)
        if not r.ok:
            log.add(step, {"error": r.error}, "failed", call=r, attempt=attempt)
            raise Stop("failed", step, f"{what} call failed: {r.error}")
        try:
            value = parse(r.text)
        except BadReply as exc:
            raws.append(r.text)
            log.add(step, {"raw": r.text, "error": str(exc)}, "failed", call=r, attempt=attempt)
            feedback = retry_note(str(exc))
            continue
        return r, value, attempt
    raise Stop("failed", step, f"{what} unusable twice: {log.steps[-1]['payload']['error']}; raw replies kept: "
                               + " || ".join(repr((t or "")[:300]) for t in raws))


def flagged(keys: tuple[str, str]) -> Callable[[str | None], tuple[bool, str]]:
    flag_key, text_key = keys

    def parse(text):
        obj = json_object(text)
        flag, body = obj.get(flag_key), obj.get(text_key)
        if not isinstance(flag, bool):
            raise BadReply(f"{flag_key!r} is not true or false: {flag!r}")
        if not isinstance(body, str):
            raise BadReply(f"{text_key!r} is not a string")
        if flag and not body.strip():
            raise BadReply(f"{flag_key} is true but {text_key!r} is empty")
        return flag, body.strip()

    return parse


def question_answer(text: str | None) -> tuple[str, str]:
    """{"question": ..., "answer": ...}, both non-empty."""
    obj = json_object(text)
    q, a = obj.get("question"), obj.get("answer")
    if not isinstance(q, str) or not q.strip() or not isinstance(a, str) or not a.strip():
        raise BadReply("reply needs a non-empty 'question' and 'answer'")
    return q.strip(), a.strip()


def distractor_list(text: str | None) -> list[str]:
    """{"distractors": [three strings]}."""
    obj = json_object(text)
    items = obj.get("distractors")
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise BadReply("reply has no list of strings under 'distractors'")
    items = [" ".join(s.split()) for s in items if s.strip()]
    if len(items) != 3:
        raise BadReply(f"reply lists {len(items)} distractors, 3 wanted")
    return items


_NUMBER_EMOTION = re.compile(r"\b(\d+)\s*[-\u2013\u2014:,]\s*([A-Za-z]+)")  # 2-happy, 2: happy, 2, happy


def parse_answer(task: str, text: str | None, numbers: tuple[int, ...] = ()) -> str:
    """An answering model's reply as an option: one sentence; H2T 'The person is ...'; EIC '2-happy'."""
    if not text or not text.strip():
        raise BadReply("empty answer")
    if task == "EIC":
        m = _NUMBER_EMOTION.search(text)
        if not m or int(m.group(1)) not in numbers:
            raise BadReply(f"answer is not number-emotion with a number of {'/'.join(map(str, numbers))}: {text[:80]!r}")
        answer = f"{int(m.group(1))}-{m.group(2).lower()}"
    else:
        answer = person_sentence(text) if task == "H2T" else " ".join(text.strip().strip('"').split())
    form = answer_form(task, numbers)
    if form and (why := form.fits(answer)):
        raise BadReply(f"answer {why}: {answer[:120]!r}")
    return answer
