"""Checks on generated text: a question must ask what its options answer and must not give its answer away, and
the four options must be distinct, of comparable length and never contained in one another."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from hvbench_assets.core.synthesis.forms import Form, form_problems
from hvbench_assets.core.synthesis.replies import normalise
from hvbench_assets.core.synthesis.words import content_words, emotion_words, stem, words


@functools.cache
def _pattern(regex: str) -> re.Pattern:
    return re.compile(regex, re.I)


@dataclass(frozen=True)
class Asks:
    """What a family's question must ask: the thing its options answer. Regular expressions, matched
    case-insensitively: the question matches every one of `all_of` and none of `none_of` (those ask for something
    else)."""
    what: str  # in words, for the problem named to the model on its one retry ("an attitude")
    all_of: tuple[str, ...]
    none_of: tuple[str, ...] = ()


def question_kind(asks: Asks, question: str) -> str | None:
    """None when `question` asks what the family's options answer (its `asks`); otherwise the problem in
    words, as the one retry names it to the model and the failed row keeps it. The option-kind check
    (forms.py) looks at the options; this one at the question above them."""
    for regex in asks.none_of:
        if m := _pattern(regex).search(question):
            return f"the question asks {m.group(0).strip()!r}, but its options answer {asks.what}: {question!r}"
    if not all(_pattern(regex).search(question) for regex in asks.all_of):
        return f"the question does not ask for {asks.what}, which its options answer: {question!r}"
    return None


@dataclass(frozen=True)
class Leak:
    key_words: list[str]  # what the answer hinges on
    found: list[str]  # of those, what the question says
    allowed_share: float

    @property
    def leaked(self) -> bool:
        if not self.key_words:
            return False
        share = len(self.found) / len(self.key_words)
        return share > self.allowed_share if self.allowed_share > 0 else bool(self.found)


def answer_key_words(answer: str, kind: str, person: str = "") -> list[str]:
    """`emotion`: the emotion words of the answer; `content`: its meaningful words minus the words that
    describe the person (the question may name the person by appearance)."""
    if kind == "emotion":
        return sorted({stem(e.split()[-1]) for e in emotion_words(answer)})
    return sorted(content_words(answer, exclude=person))


def leak_check(question: str, answer: str, kind: str, allowed_share: float = 0.0, person: str = "") -> Leak:
    """Which of the answer's key words the question contains. allowed_share 0: any one is a leak; 0.5:
    more than half of them (a causal question names one side of the cause and effect by design)."""
    keys = answer_key_words(answer, kind, person)
    in_question = {stem(w) for w in words(question)}
    return Leak(keys, [k for k in keys if k in in_question], allowed_share)


@dataclass
class OptionCheck:
    ok: bool
    problems: list[str] = field(default_factory=list)
    length_ratios: list[float] = field(default_factory=list)  # each distractor's length / the truth's
    band: tuple[float, float] = (0.5, 2.0)

    def as_dict(self) -> dict:
        return asdict(self)


def check_options(truth: str, distractors: Sequence[str], band: tuple[float, float] = (0.5, 2.0),
                  n_options: int = 4, form: Form | None = None) -> OptionCheck:
    """Exactly `n_options` options; all distinct (after lower-casing and dropping punctuation); each
    distractor's length within `band` times the truth's (characters); none a substring of another; the
    truth and every distractor of the task's `form` (forms.py), so no option stands out by its kind."""
    problems: list[str] = form_problems(form, truth, list(distractors))
    options = [truth, *distractors]
    if len(options) != n_options:
        problems.append(f"{len(options)} options, {n_options} wanted")
    norm = [normalise(o) for o in options]
    for i in range(len(options)):
        for j in range(i + 1, len(options)):
            if norm[i] == norm[j]:
                problems.append(f"options {i + 1} and {j + 1} are the same: {options[j]!r}")
            elif norm[i] and norm[j] and (norm[i] in norm[j] or norm[j] in norm[i]):
                short, long_ = (i, j) if len(norm[i]) < len(norm[j]) else (j, i)
                problems.append(f"option {short + 1} is part of option {long_ + 1}: {options[short]!r}")
    ratios = [round(len(d.strip()) / max(1, len(truth.strip())), 3) for d in distractors]
    lo, hi = band
    for i, r in enumerate(ratios):
        if not lo <= r <= hi:
            problems.append(f"distractor {i + 1} is {r:.2f}x the answer's length (band {lo}-{hi})")
    return OptionCheck(not problems, problems, ratios, band)
