"""The kind of text every option of a descriptive task must be: the truth and each distractor pass the same
check, so an option of another kind (an appearance sentence among emotions) cannot single itself out.

    ER   names at least one emotion of the taxonomy (words.py); options differ in the emotions they name
    ETA  names emotions of the taxonomy; options differ in the emotion sequence
    EIC  "number-emotion" with an offered person number and an emotion of the taxonomy
    H2T  one sentence "The person is ..."
    BTA  an action sequence: at least two actions
    BCA  a statement (not a question) about events; when the truth joins cause and effect, every option does

A failing answering model's answer is dropped; a failing question answer or distractor list is asked again
once with the problems named (replies.parsed_call and the chain's perturbation retry)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.synthesis.words import EMOTIONS, content_words, emotion_words, words
from hvbench_assets.core.tasks.replies import BadReply, normalise, person_sentence

_NUMBER_EMOTION = re.compile(r"^(\d+)-([a-z]+)$")
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


def actions(text: str) -> list[str]:
    """The actions of a sequence: the pieces between commas and sequence words that carry a content word."""
    return [p.strip() for p in _ACTION_BREAK.split(text) if content_words(p)]


def _emotions(text: str) -> str | None:
    return None if emotion_words(text) else "names no emotion of the taxonomy"


def _action_sequence(text: str) -> str | None:
    n = len(actions(text))
    return None if n >= 2 else f"is not an action sequence ({n} action; at least 2 in order)"


def _statement(text: str) -> str | None:
    if text.rstrip().endswith("?"):
        return "is a question, not a statement"
    if len(words(text)) < 3 or not content_words(text):
        return "is not a statement about events (fewer than 3 words or no content word)"
    return None


def _causal_kind(text: str) -> str:
    return "cause and effect" if CAUSAL.search(text) else "one event"


def _person(text: str) -> str | None:
    try:
        return None if normalise(person_sentence(text)) == normalise(text) else "is not in the answer form"
    except BadReply:
        return "is not in the answer form 'The person is ...'"


def _number_emotion(numbers: tuple[int, ...]) -> Callable[[str], str | None]:
    def fits(text: str) -> str | None:
        m = _NUMBER_EMOTION.match(text.strip())
        if not m or int(m.group(1)) not in numbers:
            return f"is not in the answer form number-emotion ({'/'.join(map(str, numbers))}-emotion)"
        return None if m.group(2) in EMOTIONS else f"names {m.group(2)!r}, not an emotion of the taxonomy"

    return fits


def answer_form(task: str, numbers: tuple[int, ...] = ()) -> Form | None:
    """The form every option of `task` has (None: a task of the chain without one)."""
    if task == "ER":
        return Form("an emotion of the taxonomy", _emotions, lambda t: frozenset(emotion_words(t)), "emotions")
    if task == "ETA":
        return Form("emotions of the taxonomy in order", _emotions, lambda t: tuple(emotion_words(t)),
                    "emotion sequence")
    if task == "EIC":
        return Form("number-emotion", _number_emotion(numbers), lambda t: t.strip().lower(), "number-emotion")
    if task == "H2T":
        return Form("'The person is ...'", _person)
    if task == "BTA":
        return Form("an action sequence", _action_sequence)
    if task == "BCA":
        return Form("a cause or effect statement", _statement, kind=_causal_kind)
    return None


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
