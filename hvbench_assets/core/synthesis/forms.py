"""The kinds of text an option can be, as checks a family composes into its answer form (its module under
core/tasks/families/ says which): the truth and each distractor pass the same check, so an option of another kind
(an appearance sentence among emotions) cannot single itself out.

A form also reads an answering model's free reply into an option (`Form.answer`): one sentence by default,
"The person is ..." or "number-emotion" where the family's options look like that. A failing answering model's
answer is dropped; a failing question answer or distractor list is asked again once with the problems named
(replies.parsed_call and the chain's perturbation retry)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.synthesis.replies import BadReply, normalise, person_sentence, sentence
from hvbench_assets.core.synthesis.words import EMOTIONS, content_words, emotion_words, words

_NUMBER_EMOTION = re.compile(r"^(\d+)-([a-z]+)$")
_NUMBER_EMOTION_REPLY = re.compile(r"\b(\d+)\s*[-\u2013\u2014:,]\s*([A-Za-z]+)")  # 2-happy, 2: happy, 2, happy
# what separates the actions of a sequence ("waves, then sits down and drinks")
_ACTION_BREAK = re.compile(r"[,;]|\b(?:and then|then|and|before|after that|after|followed by|finally|next|while)\b", re.I)
CAUSAL = re.compile(r"\b(?:because|so|since|therefore|thus|as a result|due to|leads? to|led to|causes?|caused|causing|"
                    r"makes?|made|making|results? in|resulted in|prompts?|prompted|prompting|in response|after which|"
                    r"which|when|after)\b", re.I)


@dataclass(frozen=True)
class Form:
    name: str  # in words, for problems and the retry's feedback
    fits: Callable[[str], str | None]  # None, or why the text is not of this kind ("names no emotion ...")
    key: Callable[[str], Any] | None = None  # options must also differ in this
    key_name: str = ""
    kind: Callable[[str], str] | None = None  # every option must be of the truth's kind
    read: Callable[[str], str] = sentence  # an answering model's reply as an option of this form

    def answer(self, text: str | None) -> str:
        """An answering model's reply as an option: read, then checked (BadReply says why not)."""
        if not text or not text.strip():
            raise BadReply("empty answer")
        answer = self.read(text)
        if why := self.fits(answer):
            raise BadReply(f"answer {why}: {answer[:120]!r}")
        return answer


def actions(text: str) -> list[str]:
    """The actions of a sequence: the pieces between commas and sequence words that carry a content word."""
    return [p.strip() for p in _ACTION_BREAK.split(text) if content_words(p)]


def names_emotions(text: str) -> str | None:
    return None if emotion_words(text) else "names no emotion of the taxonomy"


def emotion_set(text: str) -> frozenset[str]:
    return frozenset(emotion_words(text))


def emotion_sequence(text: str) -> tuple[str, ...]:
    return tuple(emotion_words(text))


def action_sequence(text: str) -> str | None:
    n = len(actions(text))
    return None if n >= 2 else f"is not an action sequence ({n} action; at least 2 in order)"


def statement(text: str) -> str | None:
    if text.rstrip().endswith("?"):
        return "is a question, not a statement"
    if len(words(text)) < 3 or not content_words(text):
        return "is not a statement about events (fewer than 3 words or no content word)"
    return None


def causal_kind(text: str) -> str:
    return "cause and effect" if CAUSAL.search(text) else "one event"


def person(text: str) -> str | None:
    try:
        return None if normalise(person_sentence(text)) == normalise(text) else "is not in the answer form"
    except BadReply:
        return "is not in the answer form 'The person is ...'"


def number_emotion(numbers: tuple[int, ...]) -> Callable[[str], str | None]:
    def fits(text: str) -> str | None:
        m = _NUMBER_EMOTION.match(text.strip())
        if not m or int(m.group(1)) not in numbers:
            return f"is not in the answer form number-emotion ({'/'.join(map(str, numbers))}-emotion)"
        return None if m.group(2) in EMOTIONS else f"names {m.group(2)!r}, not an emotion of the taxonomy"

    return fits


def read_number_emotion(numbers: tuple[int, ...]) -> Callable[[str], str]:
    """'2-happy' from a reply such as "Person 2: happy" naming an offered number."""
    def read(text: str) -> str:
        m = _NUMBER_EMOTION_REPLY.search(text)
        if not m or int(m.group(1)) not in numbers:
            raise BadReply(f"answer is not number-emotion with a number of {'/'.join(map(str, numbers))}: {text[:80]!r}")
        return f"{int(m.group(1))}-{m.group(2).lower()}"

    return read


def form_problems(form: Form | None, truth: str, distractors: list[str]) -> list[str]:
    """Every way the options break `form`: the answer or a distractor not of the kind, two options equal in
    the form's key (the same emotions in other words), a distractor of another kind than the answer."""
    if form is None:
        return []
    problems = []
    if why := form.fits(truth):
        problems.append(f"the answer {why}: {truth!r}")
    for i, d in enumerate(distractors):
        if why := form.fits(d):
            problems.append(f"distractor {i + 1} {why}: {d!r}")
        elif form.kind and form.kind(d) != form.kind(truth):
            problems.append(f"distractor {i + 1} is {form.kind(d)}, the answer {form.kind(truth)}: {d!r}")
    if form.key:
        options = [truth, *distractors]
        keys = [form.key(o) for o in options]
        for i in range(len(options)):
            for j in range(i + 1, len(options)):
                if keys[i] and keys[i] == keys[j] and normalise(options[i]) != normalise(options[j]):
                    shown = sorted(keys[i]) if isinstance(keys[i], frozenset) else keys[i]
                    problems.append(f"options {i + 1} and {j + 1} name the same {form.key_name} {shown}")
    return problems
