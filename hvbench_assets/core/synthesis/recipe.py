"""What a descriptive family hands the synthesis chain (chain.py), and the subject the chain is about.

A family's Recipe names how its caption and question are made, the prompts its answering models answer and its
writer perturbs with, the form of its options (forms.py) and the settings of the leak and option checks. Each
family's recipe is in its module under core/tasks/families/; the chain itself knows no family. The ways:

    caption   LabelCaption (the target's L5 face description) | FlaggedCaption (a JSON verdict and text; false
              rejects the clip) | DescriptionCaption ("The person is ...") | NoCaption
    question  WriterQuestion (the writer turns the caption into {question, answer}: kind and leak checks) |
              FixedQuestion (our words; the caption may be the draft answer)

`keys` and `rule` of a caption are part of the family's rule version, also where they never reject.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.calls import SynthesisModels
from hvbench_assets.core.synthesis.checks import Asks, leak_check, question_kind
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.prompts import SCORE
from hvbench_assets.core.synthesis.replies import BadReply, Stop, flagged, parsed_call, person_sentence, question_answer
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.synthesis.words import lists_fingerprint

CHAIN_VERSION = "4"  # 4: every option (truth, draft answers, distractors) of the task's form (forms.py)  # bump when chain.py's steps or checks change what a question comes out as


@dataclass
class Subject:
    """What the chain is about: the marked video, the person's appearance, the labels' caption material."""

    marking: dict
    video: Any  # Path of the question video
    appearance: str
    facial: str = ""  # L5 of the target (the caption of a LabelCaption)
    numbers: tuple[int, ...] = ()  # the offered people's numbers (a numbered question video)


def _caption_call(prompt: Prompt, models: SynthesisModels, subject: Subject):
    return lambda fb: models.write(prompt, subject.video, appearance=subject.appearance, facial=subject.facial,
                                   feedback=fb)


@dataclass(frozen=True)
class LabelCaption:
    """The target's L5 face description is the caption: read from the labels, no call."""
    rule: str = "facial_description"
    keys = None
    prompt = None

    def write(self, models: SynthesisModels, subject: Subject, log: StepLog) -> str:
        log.add("caption", {"source": "labels", "facial_description": subject.facial,
                            "appearance": subject.appearance})
        return subject.facial


@dataclass(frozen=True)
class FlaggedCaption:
    """The writer answers JSON {flag: true/false, text}; a false flag rejects the clip naming `rule`."""
    prompt: Prompt
    keys: tuple[str, str]  # (flag key, text key)
    rule: str

    def write(self, models: SynthesisModels, subject: Subject, log: StepLog) -> str:
        r, (flag, caption), attempt = parsed_call(log, "caption", _caption_call(self.prompt, models, subject),
                                                  flagged(self.keys), "caption")
        log.add("caption", {"raw": r.text, "parsed": {self.keys[0]: flag, self.keys[1]: caption}},
                "ok" if flag else "rejected", call=r, attempt=attempt)
        if not flag:
            raise Stop("rejected", self.rule, f"{self.keys[0]}=false in the task caption ({r.call_id[:12]})")
        return caption


@dataclass(frozen=True)
class DescriptionCaption:
    """The writer describes the marked person in one sentence starting "The person is"."""
    prompt: Prompt
    rule: str = "description"
    keys = None

    def write(self, models: SynthesisModels, subject: Subject, log: StepLog) -> str:
        r, caption, attempt = parsed_call(log, "caption", _caption_call(self.prompt, models, subject),
                                          person_sentence, "caption")
        log.add("caption", {"raw": r.text, "parsed": caption}, call=r, attempt=attempt)
        return caption


@dataclass(frozen=True)
class NoCaption:
    """No caption: the question is fixed and every answer comes from the answering models."""
    rule: str = ""
    keys = None
    prompt = None

    def write(self, models: SynthesisModels, subject: Subject, log: StepLog) -> str:
        return ""


@dataclass(frozen=True)
class FixedQuestion:
    """Our question; `{numbers}` and `{first}` name the offered people. With `caption_answers` the caption is the
    draft answer (the first candidate), else there is none."""
    text: str
    caption_answers: bool = False
    prompt = None

    def write(self, recipe: Recipe, asks: Asks, models: SynthesisModels, subject: Subject, log: StepLog,
              caption: str) -> tuple[str, str | None]:
        numbers = subject.numbers
        question = self.text.format(numbers=", ".join(map(str, numbers)), first=numbers[0] if numbers else "")
        answer = caption if self.caption_answers else None
        log.add("question", {"source": "fixed", "question": question, "answer": answer})
        return question, answer


@dataclass(frozen=True)
class WriterQuestion:
    """The writer turns the caption into {question, answer}. The question must ask what the options answer
    (`asks`) and its answer be of the options' form, or it is asked again once naming the problem; a question
    naming the answer's key words is rejected (`question_leak`)."""
    prompt: Prompt

    def write(self, recipe: Recipe, asks: Asks, models: SynthesisModels, subject: Subject, log: StepLog,
              caption: str) -> tuple[str, str | None]:
        form = recipe.form(subject.numbers)

        def parse(text):  # the question asks what the options answer, and the draft answer is an option too
            q, a = question_answer(text)
            if why := question_kind(asks, q):
                raise BadReply(why)
            if form and (why := form.fits(a)):
                raise BadReply(f"the answer {why} ({form.name} wanted): {a!r}")
            return q, a

        r, (question, answer), attempt = parsed_call(
            log, "question", lambda fb: models.write(self.prompt, caption=caption, appearance=subject.appearance,
                                                     feedback=fb), parse, "question")
        leak = leak_check(question, answer, recipe.leak_kind, recipe.leak_share, person=subject.appearance)
        payload = {"question": question, "answer": answer, "key_words": leak.key_words, "leaked": leak.found,
                   "allowed_share": leak.allowed_share}
        log.add("question", payload, "rejected" if leak.leaked else "ok", call=r, attempt=attempt)
        if leak.leaked:
            raise Stop("rejected", "question_leak",
                       f"the question names the answer's key words {leak.found} ({r.call_id[:12]})")
        return question, answer




@dataclass(frozen=True)
class Recipe:
    caption: LabelCaption | FlaggedCaption | DescriptionCaption | NoCaption
    question: WriterQuestion | FixedQuestion
    answer: Prompt  # the answering models' prompt
    perturb: Prompt  # the writer's perturbation prompt (its error types)
    form: Callable[[tuple[int, ...]], Form]  # every option's form, given the offered people's numbers
    leak_kind: str = "content"  # emotion | content
    leak_share: float = 0.0  # share of the answer's key words a question may contain (0: none)
    length_band: tuple[float, float] = (0.5, 2.0)  # a distractor's length over the truth's, in characters
    polarity: bool = False  # store the truth's emotional polarity (the pool balances ER by it)

    @property
    def version(self) -> str:
        """The chain's rule version for this family: the chain itself, the word lists and every setting here but
        the prompts (they enter the family's fingerprint on their own). Part of the question id and the code version."""
        blob = json.dumps([CHAIN_VERSION, lists_fingerprint(), self.caption.keys, self.caption.rule, self.leak_kind,
                           self.leak_share, list(self.length_band), self.polarity])
        return f"s{CHAIN_VERSION}-{hashlib.sha256(blob.encode()).hexdigest()[:6]}"

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        return tuple(p for p in (self.caption.prompt, self.question.prompt, self.answer, SCORE, self.perturb)
                     if p is not None)
