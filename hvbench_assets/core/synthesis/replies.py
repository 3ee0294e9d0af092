"""Reading model replies strictly: JSON objects (code fences allowed) with the keys a step asks for, one-sentence
descriptions, lists of distractors. A writer reply that does not parse is asked again once (`parsed_call`), with a
note saying why, so the retry is a new request rather than the cached first reply. The chain and every family
that asks a model (AR, AST, SCM, T2H, ATD) read their replies here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hvbench_assets.core.mllm.client import ChatResult
from hvbench_assets.core.synthesis.steps import StepLog


class BadReply(ValueError):
    """The model answered, but not in the requested form."""


class Stop(Exception):
    """The chain ends here: the question is rejected or failed (the caller keeps the steps so far)."""

    def __init__(self, status: str, rule: str, reason: str):
        super().__init__(reason)
        self.status, self.rule, self.reason = status, rule, reason


def json_object(text: str | None) -> dict[str, Any]:
    if not text or not text.strip():
        raise BadReply("empty reply")
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    if fence:
        body = fence.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise BadReply(f"no JSON object in reply: {text[:120]!r}")
    try:
        value = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise BadReply(f"reply is not valid JSON ({exc.msg}): {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise BadReply("reply JSON is not an object")
    return value


def string_list(obj: dict[str, Any], key: str, n: int) -> list[str]:
    items = obj.get(key)
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise BadReply(f"reply has no list of strings under {key!r}")
    items = [s.strip() for s in items if s.strip()]
    if len(items) < n:
        raise BadReply(f"reply lists {len(items)} {key}, {n} wanted")
    return items


def person_sentence(text: str | None) -> str:
    """The describer's "The person is ..." sentence, first sentence only."""
    if not text or not text.strip():
        raise BadReply("empty description")
    s = " ".join(text.strip().strip('"').split())
    m = re.search(r"the person is\b.*?(?:[.!?](?=\s|$)|$)", s, re.I)
    if not m:
        raise BadReply(f"description does not start with 'The person is': {s[:120]!r}")
    sentence = m.group(0).strip()
    sentence = sentence[0].upper() + sentence[1:]
    return sentence if sentence[-1] in ".!?" else sentence + "."


def sentence(text: str) -> str:
    """A reply as one line of text, outer quotes dropped."""
    return " ".join(text.strip().strip('"').split())


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


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
