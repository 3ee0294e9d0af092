"""What a task family is: one object that holds everything the project knows about one of the 16 HumanVBench task
families. Each family defines its own in one module under core/tasks/families/ (its selection rule, its builder,
its question, answer form and option checks, where its truth comes from, its pool strata, the annotation it needs
and its review guideline); core/tasks/catalog.py lists them. The task assets, the synthesis chain, the pool,
curation, the review app, the export and the docs read these objects and never branch on a family's name."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import form_problems
from hvbench_assets.core.synthesis.recipe import Recipe
from hvbench_assets.core.tasks.faces import FaceGate
from hvbench_assets.core.vision.tables import PERSON_NUMBER_RULE

EMOTION = "Emotion Perception"
PERSON = "Person Recognition"
BEHAVIOR = "Behavior Analysis"
SPEECH = "Speech-Visual Alignment"
CATEGORIES: tuple[str, ...] = (EMOTION, PERSON, BEHAVIOR, SPEECH)
MARKINGS = ("red_box", "numbers", "none", "reversed_audio")
# What the right option's text holds, for grading open-ended answers (core/scoring/open_match.py): a count, a second,
# a second range, a person number, "number-emotion", emotion words, emotions in order, an attitude, or free text
# (graded by the judge only).
ANSWER_KINDS = ("count", "time", "time_span", "person", "person_emotion", "emotion", "emotion_sequence", "attitude",
                "text")
# What an exported item's evidence holds (core/benchmark/evidence.py: what each kind reads, in words): the stretch of
# the clip the truth rests on, and whose boxes are shown at one frame of it.
EVIDENCE_SPANS = ("presence", "speaking", "action_time", "answer_range", "aligned", "speech", "clip")
EVIDENCE_PEOPLE = ("answer", "offered", "none")
# The face gate of every family whose truth reads a face (L5 emotions, L3 face class, a face to describe or
# compare): the detector must have found the face on half the frames it looked at within the track, and on
# 3 frames at least (L1's own minimum). Real faces of the shared clips reach 57 % or more (docs/gates.md);
# a body-only track has no detected face frame.
FACE_GATE = FaceGate(min_detected_share=0.5, min_detected_frames=3)


@dataclass(frozen=True)
class Evidence:
    """What the export carries with each item of a family so a user can check its grounding: a time span of the
    clip (`span`, one of EVIDENCE_SPANS) and the people whose boxes it gives (`people`, one of EVIDENCE_PEOPLE:
    the answer's person, every numbered person offered with the answer's marked, or nobody)."""
    span: str
    people: str

    def __post_init__(self) -> None:
        if self.span not in EVIDENCE_SPANS or self.people not in EVIDENCE_PEOPLE:
            raise ValueError(f"evidence {self.span!r}/{self.people!r}: span one of {EVIDENCE_SPANS}, "
                             f"people one of {EVIDENCE_PEOPLE}")


@dataclass(frozen=True)
class Annotation:
    """The human answer a family's truth is (`hvbench annotate <kind>`), and what two annotators must share to
    agree (core/curation: agreeing annotators make a question not_reviewed)."""
    kind: str  # count | action
    agreement: Callable[[Mapping[str, Any]], tuple]  # an annotation's value -> what must be equal


@dataclass(frozen=True)
class Strata:
    """How the question pool balances a family (core/benchmark/pool.py): each question row's stratum, and each
    stratum's share of the family's target."""
    weights: tuple[tuple[str, int], ...]  # (stratum, weight), in order
    place: Callable[[Mapping[str, Any]], tuple[str | None, str | None]]  # row -> (stratum, None) | (None, why none)


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)  # one object per family: compared by identity
class TaskFamily:
    # who it is
    name: str  # file stem in the published layout, e.g. "Human_Count" (the `task` column)
    abbrev: str  # the paper's acronym, e.g. "HC"
    category: str  # one of CATEGORIES
    asset: str  # asset key, e.g. human_counting
    # what it reads and shows
    labels: tuple[str, ...]  # label assets of the supplement's Table 9
    ours: tuple[str, ...] = ()  # labels our rules read beyond Table 9
    why_ours: str = ""
    marking: str  # the final question video: one of MARKINGS
    face_gate: FaceGate | None = None  # the truth reads a face: faceless tracks are skipped (FACE_GATE)
    after: tuple[TaskFamily, ...] = ()  # families whose output this one reads when it exists (AST: BTA's actions)
    # how its question is made
    select: Callable  # (labels, params) -> Verdict: the selection rule, the paper's thresholds in `params`
    build: Callable  # (BuildContext) -> Draft | Pending
    params: Any  # its parameter dataclass (part of the code version)
    version: str = "1"  # bump when a rule family's rule changes what comes out (a descriptive family's: its recipe's)
    model_prompts: tuple[Prompt, ...] = ()  # the prompts a rule family's build asks a model with
    synthesis: Recipe | None = None  # a descriptive family: what it hands the synthesis chain (core/synthesis)
    question_by_model: bool = False  # a rule family whose build has a model write the question (AR)
    records_steps: bool = False  # its model steps are stored in synthesis_steps (descriptive families and AR)
    asks: Asks  # what its question must ask (the question-kind check of a model-written question; tests for the rest)
    answer_kind: str = "text"  # one of ANSWER_KINDS: the structure of the right option's text
    # (truth, distractors, offered numbers) -> problems: a rule family's own option check (a descriptive family's
    # is its recipe's option form); benchmarks/gates.py runs it over stored questions
    options_check: Callable[[str, list[str], tuple[int, ...]], list[str]] | None = None
    # where its truth comes from
    truth: str  # in words (docs/tasks.md)
    answer_from: str  # the same for `hvbench explain`, naming the rows
    answer_labels: tuple[str, ...] = ()  # label tables the right answer is read from (the rest only gate)
    annotation: Annotation | None = None  # the truth is a human's
    evidence: Evidence = Evidence("presence", "answer")  # what the export shows the truth rests on
    # review and the pool
    guideline: str  # what a reviewer checks on a question of this family (`hvbench review`)
    reviewed: bool = True  # False: not reviewed unless configured (reliable by construction)
    from_paper: bool = True  # one of the paper's 16 (False: our extension; the paper's figures do not cover it)
    paper_no_edit: float | None = None  # the paper's share of items its reviewers kept unedited
    paper_count: int | None = None  # the paper's number of questions, where it gives one (HC)
    strata: Strata | None = None  # how the pool balances its questions

    def __repr__(self) -> str:
        return f"TaskFamily({self.abbrev})"

    def __post_init__(self) -> None:
        if self.answer_kind not in ANSWER_KINDS:
            raise ValueError(f"{self.abbrev}: answer_kind {self.answer_kind!r} is not one of {ANSWER_KINDS}")

    @property
    def descriptive(self) -> bool:
        return self.synthesis is not None

    @property
    def rule_version(self) -> str:
        return self.synthesis.version if self.synthesis is not None else self.version

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        return self.synthesis.prompts if self.synthesis is not None else self.model_prompts

    @property
    def needs_model(self) -> bool:
        return bool(self.prompts)

    @property
    def model_question(self) -> bool:
        """A model writes its question text: the question-kind check asks it again once, and its rule is part of
        the family's code version. A fixed or template question is checked by the tests instead."""
        return self.question_by_model or (self.synthesis is not None and self.synthesis.question.prompt is not None)

    @property
    def reads(self) -> tuple[str, ...]:
        """Table 9's labels, ours, and for every family the real-human verdicts (core/tasks/humans.py)."""
        return tuple(dict.fromkeys(self.labels + self.ours + ("human_verdicts",)))

    def option_problems(self, truth: str, distractors: list[str], numbers: tuple[int, ...] = ()) -> list[str]:
        """What breaks the family's option rules in a question's options (none for a family without a check)."""
        if self.synthesis is not None:
            return form_problems(self.synthesis.form(numbers), truth, distractors)
        return self.options_check(truth, distractors, numbers) if self.options_check else []

    def fingerprint(self) -> str:
        """Rule version, thresholds and prompts: any change makes a new code version."""
        blob = {"rule": self.rule_version, "params": dataclasses.asdict(self.params),
                "prompts": [p.fingerprint for p in self.prompts]}
        if self.face_gate is not None:
            blob["face_gate"] = dataclasses.asdict(self.face_gate)
        if self.model_question:  # the question-kind check decides which model questions are kept
            blob["asks"] = dataclasses.asdict(self.asks)
        if self.marking == "numbers":  # its boxes and person options carry the clip's person numbers
            blob["person_numbers"] = PERSON_NUMBER_RULE
        blob = json.dumps(blob, sort_keys=True)
        return f"{self.rule_version}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"
