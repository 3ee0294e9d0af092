"""The single place that knows the 16 task families: their asset names, the labels each reads (the
supplement's Table 9 plus what our rules need), markings, and whether a model or a human is needed.
The task assets, the task table of docs/tasks.md and the snapshot test all read this tuple."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.benchmark.tasks import TASK_BY_ABBREV, TaskInfo
from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.tasks import SYNTHESIS_TASKS
from hvbench_assets.core.tasks import actions, attitude, descriptive, people, prompts, speech, speech_content
from hvbench_assets.core.tasks.faces import FaceGate
from hvbench_assets.core.vision.tables import PERSON_LETTER_RULE


@dataclass(frozen=True)
class TaskFamily:
    asset: str  # asset key, e.g. active_speaker_detection
    abbrev: str
    labels: tuple[str, ...]  # label assets of Table 9
    ours: tuple[str, ...]  # labels our rules read beyond Table 9
    why_ours: str
    marking: str  # red_box | letters | none | reversed_audio (the final question video)
    select: Callable
    build: Callable
    params: Any
    rule_version: str = "1"
    prompts: tuple[Prompt, ...] = ()
    annotation: str | None = None  # count | action: the truth is a human's
    descriptive: bool = False  # written by the distractor-included synthesis (core/synthesis)
    truth: str = "labels"  # where the right answer comes from, in words (docs/tasks.md)
    face_gate: FaceGate | None = None  # the truth reads a face: faceless tracks are skipped (core/tasks/faces.py)
    after: tuple[str, ...] = ()  # task assets this one reads when they exist (AST: BTA's action list)

    @property
    def guideline(self) -> str:
        """What a reviewer checks on a question of this family (shown next to the item in `hvbench review`)."""
        return GUIDELINES[self.abbrev]

    @property
    def info(self) -> TaskInfo:
        return TASK_BY_ABBREV[self.abbrev]

    @property
    def task(self) -> str:
        return self.info.name

    @property
    def needs_model(self) -> bool:
        return bool(self.prompts) or self.descriptive

    @property
    def records_steps(self) -> bool:
        """Its chain is stored step by step in synthesis_steps (the six descriptive families and AR)."""
        return self.descriptive or self.abbrev == "AR"

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
        if self.marking == "letters":  # its boxes and person options carry the clip's person letters
            blob["person_letters"] = PERSON_LETTER_RULE
        blob = json.dumps(blob, sort_keys=True)
        return f"{self.rule_version}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


_GROUPING = "L7 speaking tracks are counted as people through L1 tracks merged by L2"
_DESC = descriptive.DescriptiveParams()
# The face gate of every family whose truth reads a face (L5 emotions, L3 face class, a face to describe or
# compare): the detector must have found the face on half the frames it looked at within the track, and on
# 3 frames at least (L1's own minimum). Real faces of the shared clips reach 57 % or more (docs/gates.md);
# a body-only track has no detected face frame.
FACE_GATE = FaceGate(min_detected_share=0.5, min_detected_frames=3)
_ENSEMBLE = "ensemble: weighted scores pick one model answer; perturbed runners-up"

# One short text per family for reviewers and annotators: what the right answer must satisfy and what makes an
# item unusable. Our words, after the task definitions of the paper and its supplement.
GUIDELINES = {
    "ER": "Watch the boxed person's face, voice and posture. Keep the option that best fits the feeling shown over "
          "the clip, not a single frame (an open mouth while talking is not surprise). Reject if the box leaves the "
          "person or the face is never visible.",
    "ETA": "Follow the boxed person from start to end: the right option names the emotions in the order they "
           "happen. Options with the right emotions in the wrong order are wrong. Reject if no change can be seen.",
    "AR": "Judge the boxed person's attitude to what they talk about or look at: positive, neutral, negative, or "
          "cannot be determined. Prefer 'cannot be determined' over a guess.",
    "EIC": "Compare the lettered people: the right option ranks them by how strongly they show the emotion asked "
           "about. Reject if two are too close to call or a letter sits on the wrong person.",
    "T2H": "Find the person the text describes among the lettered boxes; exactly one must fit. Reject (ambiguous) "
           "if the text fits two people, or (bad track) if a letter is on no one.",
    "H2T": "Read each description against the boxed person: the right one fits clothes, build and visible traits, "
           "the others each contain a detail that does not. Correct a wrong detail in writing rather than reject.",
    "HC": "Count every different person seen at any moment, the same person once even if they leave and return. "
          "Pause and step through crowded stretches.",
    "ATD": "The described person must be findable, and the right interval covers when they are on screen (to the "
           "second). Reject if the description fits someone else too.",
    "BTA": "Watch the boxed person's actions in order: the right option lists what they do in the order they do "
           "it. Distractors swap the order or add an action that never happens.",
    "BCA": "The right option explains why the boxed person acts as they do, from what the clip shows or says. "
           "Reject if the cause cannot be seen or heard.",
    "AST": "Go to the second named: the right option is what the boxed person begins to do then. Annotate a short, "
           "distinct action ('begins to ...') and press t where it starts, not where it is clearest.",
    "TSA": "Find when the boxed person starts the named action: the right option is that second. Annotate the start "
           "(t), and mark 'ongoing' if it is already happening when the clip begins.",
    "AVSM": "Listen to the voice and look at the lettered people: the right option is the one whose apparent sex "
            "and age match the voice. Reject if two people match equally.",
    "ASD": "Find who is speaking in the stretch asked about: lips moving in time with the voice. Reject if the "
           "speaker is off screen or two people talk at once.",
    "AVAD": "Sound and lips run together from one point on; before it the audio is reversed. The right option is "
            "the second where speech becomes natural and in sync.",
    "SCM": "Listen to the speech: the right option is what is said, word for word in meaning; distractors say "
           "something close but different. Reject if the speech is unclear.",
}

FAMILIES: tuple[TaskFamily, ...] = (
    TaskFamily("emotion_recognition", "ER", ("human_tracks", "appearance", "facial_description"), (), "",
               "red_box", descriptive.select_er, descriptive.build_er, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["ER"].prompts, rule_version=SYNTHESIS_TASKS["ER"].version,
               truth=_ENSEMBLE, face_gate=FACE_GATE),
    TaskFamily("emotion_temporal_analysis", "ETA", ("human_tracks", "appearance", "facial_description"), (), "",
               "red_box", descriptive.select_eta, descriptive.build_eta, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["ETA"].prompts, rule_version=SYNTHESIS_TASKS["ETA"].version,
               truth=_ENSEMBLE, face_gate=FACE_GATE),
    TaskFamily("attitude_recognition", "AR", ("human_tracks", "appearance"), ("person_count",),
               "the most-present person is an L2 identity (its tracks merged)", "red_box",
               attitude.select_ar, attitude.build_ar, attitude.ArParams(),
               prompts=(prompts.ATTITUDE_CAPTION, prompts.ATTITUDE_QUESTION),
               truth="one describer's answer (the synthesis's first half: caption, question; provisional)",
               face_gate=FACE_GATE),
    TaskFamily("emotion_intensity_comparison", "EIC", ("human_tracks",), (), "", "letters",
               descriptive.select_eic, descriptive.build_eic, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["EIC"].prompts, rule_version=SYNTHESIS_TASKS["EIC"].version,
               truth=_ENSEMBLE, face_gate=FACE_GATE),
    TaskFamily("text_to_human", "T2H", ("human_tracks", "person_count", "appearance"), (), "", "letters",
               people.select_t2h, people.build_t2h, people.T2hParams(), prompts=(prompts.PERSON_DESCRIPTION,),
               truth="L1 target; a model describes it", face_gate=FACE_GATE,
               rule_version="2"),  # 2: every person with a detected face is boxed, not only the co-present ones
    TaskFamily("human_to_text", "H2T", ("human_tracks", "person_count", "appearance"), (), "", "red_box",
               descriptive.select_h2t, descriptive.build_h2t, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["H2T"].prompts, rule_version=SYNTHESIS_TASKS["H2T"].version,
               truth=_ENSEMBLE, face_gate=FACE_GATE),
    TaskFamily("human_counting", "HC", ("human_tracks", "person_count"), (), "", "none",
               people.select_hc, people.build_hc, people.HcParams(), annotation="count", truth="human count"),
    TaskFamily("appearance_time_detection", "ATD", ("human_tracks", "appearance"), ("person_count",),
               "a target whose tracks L2 merged appears in several stretches and is rejected", "none",
               people.select_atd, people.build_atd, people.AtdParams(), prompts=(prompts.PERSON_DESCRIPTION,),
               truth="L1 time range; a model describes the person"),
    TaskFamily("behavior_temporal_analysis", "BTA", ("human_tracks", "appearance"), (), "", "red_box",
               descriptive.select_bta, descriptive.build_bta, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["BTA"].prompts, rule_version=SYNTHESIS_TASKS["BTA"].version,
               truth=_ENSEMBLE),
    TaskFamily("behavior_causality_analysis", "BCA", ("human_tracks", "appearance"), (), "", "red_box",
               descriptive.select_bca, descriptive.build_bca, _DESC, descriptive=True,
               prompts=SYNTHESIS_TASKS["BCA"].prompts, rule_version=SYNTHESIS_TASKS["BCA"].version,
               truth=_ENSEMBLE),
    TaskFamily("action_at_specified_time", "AST", ("human_tracks",), ("person_count", "appearance"),
               "L4 gives the model context for distractor actions (BTA's action list once synthesis exists)",
               "red_box", actions.select_ast, actions.build_ast, actions.ActionParams(),
               prompts=(prompts.ACTION_DISTRACTORS, prompts.ACTION_FROM_LIST), annotation="action",
               truth="human action; model distractors", after=("behavior_temporal_analysis",),
               rule_version="2"),  # 2: distractors must have the truth's form (actions.action_form)
    TaskFamily("time_of_specific_action", "TSA", ("human_tracks",), ("person_count",),
               "the most-present person is an L2 identity", "red_box",
               actions.select_tsa, actions.build_tsa, actions.ActionParams(), annotation="action",
               truth="human action-time pair"),
    TaskFamily("audio_visual_speaker_matching", "AVSM",
               ("human_tracks", "person_count", "demographics", "audio_tags", "voice_demographics"), (), "",
               "letters", speech.select_avsm, speech.build_avsm, speech.AvsmParams(), truth="L10 voice class = one L3 face class",
               face_gate=FACE_GATE),
    TaskFamily("active_speaker_detection", "ASD", ("human_tracks", "person_count", "audio_tags", "speaker_scores"),
               (), "", "letters", speech.select_asd, speech.build_asd, speech.AsdParams(), truth="L7 single speaking person"),
    TaskFamily("audio_visual_alignment_detection", "AVAD", ("person_count", "audio_tags", "speaker_scores"),
               ("human_tracks",), _GROUPING, "reversed_audio", speech.select_avad, speech.build_avad,
               speech.AvadParams(), truth="seeded cut point"),
    TaskFamily("speech_content_matching", "SCM", ("person_count", "audio_tags", "transcript"),
               ("speaker_scores", "human_tracks"), "the paper's rule 'the person speaks' reads L7 (Table 9 omits it); "
               + _GROUPING, "none", speech_content.select_scm, speech_content.build_scm,
               speech_content.ScmParams(), prompts=(prompts.SPEECH_DISTRACTORS,), truth="L8 text; model distractors"),
)

FAMILY_BY_ASSET = {f.asset: f for f in FAMILIES}
FAMILY_BY_ABBREV = {f.abbrev: f for f in FAMILIES}
