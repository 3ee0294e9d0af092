"""The 16 task families as code: each catalog entry (core/tasks/catalog.py, which describes them: names, labels,
markings, answer sources, review rules, guidelines) joined with its selection rule, option builder, parameters and
prompts. The task assets, the task table of docs/tasks.md and the snapshot test all read FAMILIES.

The descriptive families take their prompts and rule version from core/synthesis/tasks.py: an arrow up a floor,
since the synthesis chain is what builds their options."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.tasks import actions, attitude, descriptive, people, prompts, speech, speech_content
from hvbench_assets.core.tasks.catalog import TASKS, Task
from hvbench_assets.core.tasks.faces import FaceGate
from hvbench_assets.core.vision.tables import PERSON_NUMBER_RULE


@dataclass(frozen=True)
class TaskFamily:
    info: Task  # the catalog entry
    select: Callable
    build: Callable
    params: Any
    rule_version: str = "1"
    prompts: tuple[Prompt, ...] = ()
    face_gate: FaceGate | None = None  # the truth reads a face: faceless tracks are skipped (core/tasks/faces.py)

    @property
    def asset(self) -> str:
        return self.info.asset

    @property
    def abbrev(self) -> str:
        return self.info.abbrev

    @property
    def task(self) -> str:
        return self.info.name

    @property
    def labels(self) -> tuple[str, ...]:
        return self.info.labels

    @property
    def ours(self) -> tuple[str, ...]:
        return self.info.ours

    @property
    def why_ours(self) -> str:
        return self.info.why_ours

    @property
    def marking(self) -> str:
        return self.info.marking

    @property
    def annotation(self) -> str | None:
        return self.info.annotation

    @property
    def synthesis(self):
        return self.info.synthesis

    @property
    def asks(self):
        return self.info.asks

    @property
    def descriptive(self) -> bool:
        return self.info.descriptive

    @property
    def truth(self) -> str:
        return self.info.truth

    @property
    def after(self) -> tuple[str, ...]:
        return self.info.after

    @property
    def guideline(self) -> str:
        """What a reviewer checks on a question of this family (shown next to the item in `hvbench review`)."""
        return self.info.guideline

    @property
    def needs_model(self) -> bool:
        return bool(self.prompts) or self.descriptive

    @property
    def records_steps(self) -> bool:
        """Its chain is stored step by step in synthesis_steps (the six descriptive families and AR)."""
        return self.info.records_steps

    @property
    def reads(self) -> tuple[str, ...]:
        """Table 9's labels, ours, and for every family the real-human verdicts (core/tasks/humans.py)."""
        return tuple(dict.fromkeys(self.labels + self.ours + ("human_verdicts",)))

    def fingerprint(self) -> str:
        """Rule version, thresholds and prompts: any change makes a new code version."""
        blob = {"rule": self.rule_version, "params": dataclasses.asdict(self.params),
                "prompts": [p.fingerprint for p in self.prompts]}
        if self.face_gate is not None:
            blob["face_gate"] = dataclasses.asdict(self.face_gate)
        if self.info.model_question:  # the question-kind check decides which model questions are kept
            blob["asks"] = dataclasses.asdict(self.info.asks)
        if self.marking == "numbers":  # its boxes and person options carry the clip's person numbers
            blob["person_numbers"] = PERSON_NUMBER_RULE
        blob = json.dumps(blob, sort_keys=True)
        return f"{self.rule_version}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


# The face gate of every family whose truth reads a face (L5 emotions, L3 face class, a face to describe or
# compare): the detector must have found the face on half the frames it looked at within the track, and on
# 3 frames at least (L1's own minimum). Real faces of the shared clips reach 57 % or more (docs/gates.md);
# a body-only track has no detected face frame.
FACE_GATE = FaceGate(min_detected_share=0.5, min_detected_frames=3)
_MODULES = {m.__name__.rsplit(".", 1)[1]: m for m in (actions, attitude, descriptive, people, speech, speech_content)}


def family(task: Task) -> TaskFamily:
    """A catalog entry with its code: select_<abbrev> / build_<abbrev> and the parameters of its rules module."""
    module, key = _MODULES[task.rules.module], task.abbrev.lower()
    if task.synthesis is not None:
        found, version, build = task.synthesis.prompts, task.synthesis.version, descriptive.build
    else:
        found, version = tuple(getattr(prompts, name) for name in task.rules.prompts), task.rules.version
        build = getattr(module, f"build_{key}")
    return TaskFamily(task, getattr(module, f"select_{key}"), build,
                      getattr(module, task.rules.params)(), rule_version=version, prompts=found,
                      face_gate=FACE_GATE if task.face else None)


FAMILIES: tuple[TaskFamily, ...] = tuple(family(t) for t in TASKS)
FAMILY_BY_ASSET = {f.asset: f for f in FAMILIES}
FAMILY_BY_ABBREV = {f.abbrev: f for f in FAMILIES}
