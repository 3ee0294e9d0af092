"""The six descriptive tasks as the synthesis chain uses them: the catalog's settings (core/tasks/catalog.py:
where the caption comes from and when it rejects the clip, how the question is made, the answer's form, the leak
rule and the perturbation's error types) joined with their prompts, and the rule version they make."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis import prompts as P
from hvbench_assets.core.synthesis.words import lists_fingerprint
from hvbench_assets.core.tasks.catalog import TASKS, Task


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


def _task(task: Task) -> SynthesisTask:
    """The catalog's synthesis settings of a descriptive family with its prompts (core/tasks/catalog.py)."""
    syn, key = task.synthesis, task.abbrev.lower()
    return SynthesisTask(task.abbrev, getattr(P, syn.caption) if syn.caption else None, syn.caption_keys,
                         syn.caption_rule, getattr(P, syn.question) if syn.question else None,
                         P.answer_prompt(key, syn.answer_hint), P.perturb_prompt(key, syn.errors),
                         leak_kind=syn.leak_kind, leak_share=syn.leak_share, length_band=syn.length_band,
                         polarity=syn.polarity)


SYNTHESIS_TASKS: dict[str, SynthesisTask] = {t.abbrev: _task(t) for t in TASKS if t.synthesis is not None}
