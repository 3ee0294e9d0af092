"""What differs between the six descriptive tasks: where the caption comes from and when it rejects the
clip, how the question is made, the answer's form, the leak rule and the perturbation's error types."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis import prompts as P
from hvbench_assets.core.synthesis.words import lists_fingerprint


CHAIN_VERSION = "4"  # 4: every option (truth, draft answers, distractors) of the task's form (forms.py)  # bump when chain.py's steps or checks change what a question comes out as


@dataclass(frozen=True)
class SynthesisTask:
    abbrev: str
    caption: Prompt | None  # None: the caption is read from labels (ER) or there is none (EIC)
    caption_keys: tuple[str, str] | None  # JSON caption: (flag key, text key); None: a sentence / labels
    caption_rule: str  # the rule named when the caption rejects the clip
    question: Prompt | None  # None: a fixed question
    answer: Prompt
    perturb: Prompt
    leak_kind: str = "content"  # emotion | content
    leak_share: float = 0.0  # share of the answer's key words a question may contain (0: none)
    length_band: tuple[float, float] = (0.5, 2.0)
    polarity: bool = False  # store the truth's emotional polarity (ER)

    @property
    def version(self) -> str:
        """The chain's rule version for this task: the chain itself, the word lists and every setting here but
        the prompts (they enter the task's fingerprint on their own). Part of the question id and the code version."""
        blob = json.dumps([CHAIN_VERSION, lists_fingerprint(), self.caption_keys, self.caption_rule, self.leak_kind, self.leak_share,
                           list(self.length_band), self.polarity])
        return f"s{CHAIN_VERSION}-{hashlib.sha256(blob.encode()).hexdigest()[:6]}"

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        return tuple(p for p in (self.caption, self.question, self.answer, P.SCORE, self.perturb) if p is not None)


def _task(abbrev: str, caption, keys, rule, question, hint: str, errors: str, **kw) -> SynthesisTask:
    key = abbrev.lower()
    return SynthesisTask(abbrev, caption, keys, rule, question, P.answer_prompt(key, hint),
                         P.perturb_prompt(key, errors), **kw)


SYNTHESIS_TASKS: dict[str, SynthesisTask] = {t.abbrev: t for t in (
    _task("ER", None, None, "facial_description", P.ER_QUESTION, "",
          "replace an emotion word with a wrong one, or add an emotion the person does not show",
          leak_kind="emotion", polarity=True),
    _task("ETA", P.ETA_CAPTION, ("emotion_change", "emotion_sequence"), "emotion_change", P.ETA_QUESTION, "",
          "insert an emotion that does not occur into the sequence, drop one that does, or replace one with a "
          "wrong one", leak_kind="emotion"),
    _task("EIC", None, None, "", None, " Reply only as letter-emotion, for example \"B-happy\".",
          "if a draft names the same letter as the correct answer, change its emotion; if it names another "
          "letter, the emotion may stay", length_band=(0.3, 3.0)),
    _task("H2T", P.H2T_CAPTION, None, "description", None, " Begin with \"The person is\".",
          "make the position relative to objects or other people wrong, or change a detail of the person's "
          "appearance (clothing, colour, hair, accessories)"),
    _task("BTA", P.BTA_CAPTION, ("action_change", "action_sequence"), "action_change", P.BTA_QUESTION, "",
          "add an action that does not happen, leave one out, swap the order of two, or replace one with a "
          "wrong one"),
    _task("BCA", P.BCA_CAPTION, ("causal_events_exist", "causal_events_description"), "causal_event",
          P.BCA_QUESTION, "",
          "give a wrong cause, describe a wrong effect, swap cause and effect, or over- or under-state a factor",
          leak_share=0.5),
)}
