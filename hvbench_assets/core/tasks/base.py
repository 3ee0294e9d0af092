"""The shape every task family fills: `select(labels, params) -> Verdict` and
`build(ctx) -> Draft | Pending`. A family module holds only its own rules; shared ones are in rules.py."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hvbench_assets.core.synthesis.replies import Stop
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict


@dataclass
class Draft:
    """A question whose options still need their letters (the answer slot is drawn from the question id)."""

    question: str
    truth: Option
    distractors: list[Option]
    marking: dict[str, Any]  # {"kind": "numbers"} | {"kind": "red_box", "track_ids": [...]} | {"kind": "none"} | ...
    provisional: bool = False
    status: str = "draft"
    call_ids: list[str] = field(default_factory=list)
    annotation_ids: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # what the build measured or decided (stored with the rule params)
    rule_params: dict[str, Any] = field(default_factory=dict)  # top-level rule_params entries (ER: polarity)
    steps: list[dict[str, Any]] = field(default_factory=list)  # synthesis_steps of a synthesized question


@dataclass
class Pending:
    """No question (yet): waiting for a human, a model that is missing, or a model answer that was unusable."""

    status: str  # awaiting_annotation | blocked | failed | rejected
    reason: str
    call_ids: list[str] = field(default_factory=list)
    annotation_ids: list[str] = field(default_factory=list)
    rule: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)  # synthesis_steps up to where it stopped


def stopped(stop: Stop, log: StepLog, rule: str | None = None, annotation_ids: list[str] | None = None) -> Pending:
    """The Pending of a model step that stopped (core/synthesis `Stop`): its status and reason, the calls and steps
    so far (stored by the families that record steps). `rule` replaces the step's own."""
    return Pending(stop.status, stop.reason, call_ids=log.call_ids, annotation_ids=annotation_ids or [],
                   rule=rule or stop.rule, steps=log.steps)


class ModelAnswer(Protocol):
    text: str | None
    call_id: str
    error: str | None

    @property
    def ok(self) -> bool: ...


@dataclass
class BuildContext:
    labels: ClipLabels
    verdict: Verdict
    rng: random.Random
    params: Any
    numbers: Mapping[int, int] = field(default_factory=dict)  # the clip's person numbers (vision number_tracks)
    # a describer/LLM call: ask(prompt, system=None, video=None) -> ModelAnswer (video frames sampled when given)
    ask: Callable[..., ModelAnswer] | None = None
    # the red-box video of some tracks, rendered once per (clip, tracks) and shared
    red_box_video: Callable[[tuple[int, ...]], Path] | None = None
    annotation: Mapping[str, Any] | None = None  # the latest human annotation for this clip and task
    # the question video of any marking ({"kind": "numbers", "numbers": {...}}), rendered once and shared
    marked_video: Callable[[Mapping[str, Any]], Path] | None = None
    synthesis: Any = None  # core.synthesis.calls.SynthesisModels: writer + answering models (descriptive tasks)
    family: Any = None  # the TaskFamily building (a shared build reads the family's recipe and checks from it)
    bta_actions: tuple[str, ...] = ()  # AST: the action list of the clip's BTA synthesis, when it exists
