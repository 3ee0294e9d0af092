"""The task catalog: the one place that describes the 16 HumanVBench task families.

Everything else reads it: the published file names and categories (core/benchmark/tasks.py re-exports them), the
labels each family reads and its question video (core/tasks/registry.py, the task assets, docs/tasks.md), where
the right answer comes from (`hvbench explain`), the synthesis settings of the six descriptive families
(core/synthesis/tasks.py), the review rules (core/curation) and the reviewer guidelines (`hvbench review`).
hvbench_assets_tests/test_task_catalog.py fails when another module keeps its own per-task table.

It is plain data and imports nothing of the package: code is named, not imported. `rules` names the module under
core/tasks/ holding the family's `select_<abbrev>` and `build_<abbrev>` and its parameter class; prompts are named
by their constant in core/tasks/prompts.py (rule families) or core/synthesis/prompts.py (descriptive families).
"""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis import forms, prompts as SP
from hvbench_assets.core.synthesis.recipe import (
    DescriptionCaption,
    FixedQuestion,
    FlaggedCaption,
    LabelCaption,
    NoCaption,
    WriterQuestion,
)
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.forms import Form
from hvbench_assets.core.synthesis.recipe import Recipe
from hvbench_assets.core.synthesis.replies import person_sentence

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


@dataclass(frozen=True)
class Rules:
    """The code behind a family: `select_<abbrev>` / `build_<abbrev>` and `params` of core/tasks/<module>.py."""
    module: str
    params: str  # its parameter dataclass (the paper's thresholds as defaults)
    prompts: tuple[str, ...] = ()  # constants of core/tasks/prompts.py the rules ask a model with
    version: str = "1"  # bump when the rule changes what comes out (descriptive families: SynthesisTask.version)


# What questions ask, as word patterns. Generous on purpose: they catch a question that asks another thing
# ("Which action best describes ..." above attitude options), not wording they have not seen.
_EMOTION_Q = r"\b(?:emotions?|emotional(?:ly)?|feel(?:s|ing|ings)?|felt|mood|express(?:es|ed|ing|ions?)?)\b"
_ATTITUDE_Q = (r"\b(?:attitudes?|stance|opinions?|views?|sentiments?|feel(?:s|ing|ings)?|think(?:s|ing)?|regards?|"
               r"regarding|towards?|approv\w*|disapprov\w*|disposition|outlook)\b")
_CHANGE_Q = (r"\b(?:chang\w*|develop\w*|evolv\w*|shift\w*|transition\w*|progress\w*|sequence|order|throughout|over "
             r"(?:the|time)|as the (?:video|clip)|first|start\w*|begin\w*|turn\w*|from\b.+\bto)\b")
_ACTION_Q = (r"\b(?:actions?|activit(?:y|ies)|do|does|did|doing|perform\w*|mov(?:e|es|ed|ing|ements?)|"
             r"behaviou?rs?|gestures?|steps?)\b")
_ORDER_Q = (r"\b(?:order|sequence|then|after|before|first|next|series|in turn|chang\w*|throughout|over the|"
            r"as the (?:video|clip))\b")
_CAUSE_Q = (r"\b(?:why|reasons?|caus\w*|effects?|results?|resulting|consequen\w*|leads?|led|prompt\w*|outcome|"
            r"because|due|respon\w*|brings?|brought|happens?|happened|follows?|followed|after)\b")
_PERSON_Q = r"\b(?:who|whose|whom|which (?:of the )?(?:persons?|people|one)|(?:select|choose|pick) the person)\b"
_SPEECH_Q = r"\b(?:speak\w*|speech|voices?|heard|talk\w*|said|says|spoken)\b"
_TIME_Q = r"\b(?:when|which part|what time|seconds?|moment)\b"
_COUNT_Q = r"\bhow many\b"
# a question that asks for another kind of answer than the family's options
_ASKS_ACTION = (r"\b(?:which|what) (?:actions?|activit(?:y|ies)|movements?|gestures?)\b|"
                r"\bwhat (?:is|are) (?:he|she|they|the \w+) doing\b")
_ASKS_TIME = r"\b(?:at (?:which|what) (?:second|time|moment)|during which part|how long)\b"
_ASKS_CAUSE = r"^\W*why\b"
_ASKS_EMOTION = r"\b(?:which|what) emotions?\b"
_ASKS_FEELING = (_ASKS_ACTION, _ASKS_TIME, _ASKS_CAUSE, _COUNT_Q)  # wrong for emotion and attitude questions


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
class Task:
    name: str  # file stem in the published layout, e.g. "Human_Count"
    abbrev: str  # the paper's acronym, e.g. "HC"
    category: str
    asset: str  # asset key, e.g. human_counting
    labels: tuple[str, ...]  # label assets of the supplement's Table 9
    marking: str  # the final question video: red_box | numbers | none | reversed_audio
    rules: Rules
    truth: str  # where the right answer comes from, in words (docs/tasks.md)
    answer_from: str  # the same for `hvbench explain`, naming the rows
    guideline: str  # what a reviewer checks on a question of this family (`hvbench review`)
    answer_labels: tuple[str, ...] = ()  # label tables the right answer is read from (the rest only gate)
    ours: tuple[str, ...] = ()  # labels our rules read beyond Table 9
    why_ours: str = ""
    synthesis: Recipe | None = None  # a descriptive family: written by core/synthesis
    records_steps: bool = False  # its chain is stored in synthesis_steps (descriptive families and AR)
    annotation: str | None = None  # count | action: the truth is a human's
    reviewed: bool = True  # False: not reviewed unless configured (reliable by construction)
    face: bool = False  # the truth reads a face: faceless tracks are skipped (registry.FACE_GATE)
    after: tuple[str, ...] = ()  # task assets this one reads when they exist (AST: BTA's action list)
    paper_no_edit: float | None = None  # the paper's share of items its reviewers kept unedited
    asks: Asks | None = None  # what its question must ask (every family has one; test_task_catalog checks)
    answer_kind: str = "text"  # one of ANSWER_KINDS: the structure of the right option's text
    evidence: Evidence = Evidence("presence", "answer")  # what the export shows the truth rests on

    def __post_init__(self) -> None:
        if self.answer_kind not in ANSWER_KINDS:
            raise ValueError(f"{self.abbrev}: answer_kind {self.answer_kind!r} is not one of {ANSWER_KINDS}")

    @property
    def descriptive(self) -> bool:
        return self.synthesis is not None

    @property
    def model_question(self) -> bool:
        """A model writes its question text: the question-kind check asks it again once, and its rule is part of
        the family's code version. A fixed or template question is checked by the tests instead."""
        return (self.synthesis is not None and self.synthesis.question.prompt is not None) or \
            any(p.endswith("_QUESTION") for p in self.rules.prompts)


def _er_form(numbers=()):
    return Form("an emotion of the taxonomy", forms.names_emotions, forms.emotion_set, "emotions")


def _eta_form(numbers=()):
    return Form("emotions of the taxonomy in order", forms.names_emotions, forms.emotion_sequence, "emotion sequence")


def _eic_form(numbers=()):
    return Form("number-emotion", forms.number_emotion(numbers), lambda t: t.strip().lower(), "number-emotion",
                read=forms.read_number_emotion(numbers))


def _h2t_form(numbers=()):
    return Form("'The person is ...'", forms.person, read=person_sentence)


def _bta_form(numbers=()):
    return Form("an action sequence", forms.action_sequence)


def _bca_form(numbers=()):
    return Form("a cause or effect statement", forms.statement, kind=forms.causal_kind)


_GROUPING = "L7 speaking tracks are counted as people through L1 tracks merged by L2"
_ENSEMBLE = "ensemble: weighted scores pick one model answer; perturbed runners-up"
_ENSEMBLE_FROM = "the synthesis ensemble (synthesis_steps)"
_DESC = Rules("descriptive", "DescriptiveParams")
_EMOTION_LABELS = ("human_tracks", "appearance", "facial_description")
_ON_SCREEN = Evidence("presence", "answer")  # the boxed person, over the stretch they are tracked
_NUMBERED = Evidence("presence", "offered")  # every numbered person, the answer's over its stretch

# Guidelines and truths are our words, after the task definitions of the paper and its supplement.
TASKS: tuple[Task, ...] = (
    Task("Emotion_Recognition", "ER", EMOTION, "emotion_recognition", _EMOTION_LABELS, "red_box", _DESC,
         truth=_ENSEMBLE, answer_from=_ENSEMBLE_FROM, answer_labels=("facial_description",), face=True,
         records_steps=True, paper_no_edit=0.81,
         synthesis=Recipe(LabelCaption(), WriterQuestion(SP.ER_QUESTION), SP.answer_prompt("er", ""),
                          SP.perturb_prompt("er", "replace an emotion word with a wrong one, or add an emotion the "
                                            "person does not show"), _er_form, leak_kind="emotion", polarity=True),
         asks=Asks("the emotion the person shows", (_EMOTION_Q,), _ASKS_FEELING),
         answer_kind="emotion",
         evidence=_ON_SCREEN,
         guideline="Watch the boxed person's face, voice and posture. Keep the option that best fits the feeling "
                   "shown over the clip, not a single frame (an open mouth while talking is not surprise). Reject "
                   "if the box leaves the person or the face is never visible."),
    Task("Emotion_Temporal_Analysis", "ETA", EMOTION, "emotion_temporal_analysis", _EMOTION_LABELS, "red_box", _DESC,
         truth=_ENSEMBLE, answer_from=_ENSEMBLE_FROM, answer_labels=("facial_description",), face=True,
         records_steps=True, paper_no_edit=0.83,
         synthesis=Recipe(FlaggedCaption(SP.ETA_CAPTION, ("emotion_change", "emotion_sequence"), "emotion_change"),
                          WriterQuestion(SP.ETA_QUESTION), SP.answer_prompt("eta", ""),
                          SP.perturb_prompt("eta", "insert an emotion that does not occur into the sequence, drop one "
                                            "that does, or replace one with a wrong one"), _eta_form,
                          leak_kind="emotion"),
         asks=Asks("how the person's emotions change over the clip", (_EMOTION_Q, _CHANGE_Q), _ASKS_FEELING),
         answer_kind="emotion_sequence",
         evidence=_ON_SCREEN,
         guideline="Follow the boxed person from start to end: the right option names the emotions in the order "
                   "they happen. Options with the right emotions in the wrong order are wrong. Reject if no change "
                   "can be seen."),
    Task("Attitude_Recognition", "AR", EMOTION, "attitude_recognition", ("human_tracks", "appearance"), "red_box",
         # 2: its question must ask for an attitude (the question-kind check, `asks`)
         Rules("attitude", "ArParams", prompts=("ATTITUDE_CAPTION", "ATTITUDE_QUESTION"), version="2"),
         ours=("person_count",), why_ours="the most-present person is an L2 identity (its tracks merged)",
         truth="one describer's answer (the synthesis's first half: caption, question; provisional)",
         answer_from="a model's answer", answer_labels=("appearance",), face=True, records_steps=True,
         asks=Asks("the person's attitude (positive, negative, neutral)", (_ATTITUDE_Q,),
                   _ASKS_FEELING + (_ASKS_EMOTION,)),
         answer_kind="attitude",
         evidence=_ON_SCREEN,
         guideline="Judge the boxed person's attitude to what they talk about or look at: positive, neutral, "
                   "negative, or cannot be determined. Prefer 'cannot be determined' over a guess."),
    Task("Emotion_Intensity_Compare", "EIC", EMOTION, "emotion_intensity_comparison", ("human_tracks",), "numbers",
         _DESC, truth=_ENSEMBLE, answer_from=_ENSEMBLE_FROM, face=True, records_steps=True, paper_no_edit=0.63,
         synthesis=Recipe(NoCaption(), FixedQuestion(SP.EIC_FIXED_QUESTION),
                          SP.answer_prompt("eic", " Reply only as number-emotion, for example \"2-happy\"."),
                          SP.perturb_prompt("eic", "if a draft names the same number as the correct answer, change its "
                                            "emotion; if it names another number, the emotion may stay"), _eic_form,
                          length_band=(0.3, 3.0)),
         asks=Asks("which numbered person shows which emotion", (_PERSON_Q, _EMOTION_Q)),
         answer_kind="person_emotion",
         evidence=_NUMBERED,
         guideline="Compare the numbered people: the right option ranks them by how strongly they show the emotion "
                   "asked about. Reject if two are too close to call or a number sits on the wrong person."),
    Task("Text2Human", "T2H", PERSON, "text_to_human", ("human_tracks", "person_count", "appearance"), "numbers",
         # 2: every person with a detected face is boxed, not only the co-present ones
         Rules("people", "T2hParams", prompts=("PERSON_DESCRIPTION",), version="2"),
         truth="L1 target; a model describes it", answer_from="the L1 target track, described by a model",
         answer_labels=("human_tracks", "appearance"), face=True,
         asks=Asks("the person a description fits", (_PERSON_Q,)),
         answer_kind="person",
         evidence=_NUMBERED,
         guideline="Find the person the text describes among the numbered boxes; exactly one must fit. Reject "
                   "(ambiguous) if the text fits two people, or (bad track) if a number is on no one."),
    Task("Human2Text", "H2T", PERSON, "human_to_text", ("human_tracks", "person_count", "appearance"), "red_box",
         _DESC, truth=_ENSEMBLE, answer_from=_ENSEMBLE_FROM, answer_labels=("appearance",), face=True,
         records_steps=True, paper_no_edit=0.65,
         synthesis=Recipe(DescriptionCaption(SP.H2T_CAPTION), FixedQuestion(SP.H2T_FIXED_QUESTION, caption_answers=True),
                          SP.answer_prompt("h2t", " Begin with \"The person is\"."),
                          SP.perturb_prompt("h2t", "make the position relative to objects or other people wrong, or "
                                            "change a detail of the person's appearance (clothing, colour, hair, "
                                            "accessories)"), _h2t_form),
         asks=Asks("a description of the person", (r"\b(?:describe|description|look like|appearance)\b",)),
         evidence=_ON_SCREEN,
         guideline="Read each description against the boxed person: the right one fits clothes, build and visible "
                   "traits, the others each contain a detail that does not. Correct a wrong detail in writing "
                   "rather than reject."),
    Task("Human_Count", "HC", PERSON, "human_counting", ("human_tracks", "person_count"), "none",
         Rules("people", "HcParams"), truth="human count", answer_from="a human count (annotations)",
         annotation="count", asks=Asks("a number of people", (_COUNT_Q, r"\b(?:people|persons?|individuals)\b")),
         answer_kind="count",
         evidence=Evidence("clip", "none"),
         guideline="Count every different person seen at any moment, the same person once even if they leave and "
                   "return. Pause and step through crowded stretches."),
    Task("Appearance_Time_Detection", "ATD", PERSON, "appearance_time_detection", ("human_tracks", "appearance"),
         "none", Rules("people", "AtdParams", prompts=("PERSON_DESCRIPTION",)),
         ours=("person_count",),
         why_ours="a target whose tracks L2 merged appears in several stretches and is rejected",
         truth="L1 time range; a model describes the person", answer_from="the target's L1 presence range",
         answer_labels=("human_tracks",), asks=Asks("when the person is on screen", (_TIME_Q,)),
         answer_kind="time_span",
         evidence=Evidence("answer_range", "answer"),
         guideline="The described person must be findable, and the right interval covers when they are on screen "
                   "(to the second). Reject if the description fits someone else too."),
    Task("Behavior_Temporal_Analysis", "BTA", BEHAVIOR, "behavior_temporal_analysis", ("human_tracks", "appearance"),
         "red_box", _DESC, truth=_ENSEMBLE, answer_from=_ENSEMBLE_FROM, records_steps=True, paper_no_edit=0.68,
         synthesis=Recipe(FlaggedCaption(SP.BTA_CAPTION, ("action_change", "action_sequence"), "action_change"),
                          WriterQuestion(SP.BTA_QUESTION), SP.answer_prompt("bta", ""),
                          SP.perturb_prompt("bta", "add an action that does not happen, leave one out, swap the order "
                                            "of two, or replace one with a wrong one"), _bta_form),
         asks=Asks("the person's actions in order", (_ACTION_Q, _ORDER_Q), (_ASKS_TIME, _COUNT_Q, _ASKS_EMOTION)),
         evidence=_ON_SCREEN,
         guideline="Watch the boxed person's actions in order: the right option lists what they do in the order "
                   "they do it. Distractors swap the order or add an action that never happens."),
    Task("Behavior_Causualty_Analysis", "BCA", BEHAVIOR,  # sic: the published file name
         "behavior_causality_analysis", ("human_tracks", "appearance"), "red_box", _DESC, truth=_ENSEMBLE,
         answer_from=_ENSEMBLE_FROM, records_steps=True, paper_no_edit=0.74,
         synthesis=Recipe(FlaggedCaption(SP.BCA_CAPTION, ("causal_events_exist", "causal_events_description"),
                                         "causal_event"), WriterQuestion(SP.BCA_QUESTION), SP.answer_prompt("bca", ""),
                          SP.perturb_prompt("bca", "give a wrong cause, describe a wrong effect, swap cause and effect, "
                                            "or over- or under-state a factor"), _bca_form, leak_share=0.5),
         asks=Asks("a cause or an effect", (_CAUSE_Q,), (_ASKS_TIME, _COUNT_Q, _ASKS_EMOTION)),
         evidence=_ON_SCREEN,
         guideline="The right option explains why the boxed person acts as they do, from what the clip shows or "
                   "says. Reject if the cause cannot be seen or heard."),
    Task("Action_at_Specified_Time", "AST", BEHAVIOR, "action_at_specified_time", ("human_tracks",), "red_box",
         # 2: distractors must have the truth's form (actions.action_form)
         Rules("actions", "ActionParams", prompts=("ACTION_DISTRACTORS", "ACTION_FROM_LIST"), version="2"),
         ours=("person_count", "appearance"),
         why_ours="L4 gives the model context for distractor actions (BTA's action list once synthesis exists)",
         truth="human action; model distractors", answer_from="a human action-time pair (annotations)",
         annotation="action", after=("behavior_temporal_analysis",),
         asks=Asks("the action at a given second", (_ACTION_Q,)),
         evidence=Evidence("action_time", "answer"),
         guideline="Go to the second named: the right option is what the boxed person begins to do then. Annotate "
                   "a short, distinct action ('begins to ...') and press t where it starts, not where it is "
                   "clearest."),
    Task("Time_of_Specific_Action", "TSA", BEHAVIOR, "time_of_specific_action", ("human_tracks",), "red_box",
         Rules("actions", "ActionParams"), ours=("person_count",), why_ours="the most-present person is an L2 identity",
         truth="human action-time pair", answer_from="a human action-time pair (annotations)", annotation="action",
         asks=Asks("the second an action starts", (_TIME_Q,)),
         answer_kind="time",
         evidence=Evidence("action_time", "answer"),
         guideline="Find when the boxed person starts the named action: the right option is that second. Annotate "
                   "the start (t), and mark 'ongoing' if it is already happening when the clip begins."),
    Task("Audio_Visual_Speaker_Matching", "AVSM", SPEECH, "audio_visual_speaker_matching",
         ("human_tracks", "person_count", "demographics", "audio_tags", "voice_demographics"), "numbers",
         Rules("speech", "AvsmParams", version="2"), ours=("speaker_scores",),
         why_ours="the voice must be the one L7 hears from the matched face: an off-screen voice matches no one",
         truth="L10 voice class = one L3 face class = the L7 speaker",
         answer_from="the person whose L3 face class equals the L10 voice class and whom L7 alone hears speak",
         answer_labels=("voice_demographics", "demographics", "speaker_scores"), face=True,
         asks=Asks("the person whose voice is heard", (_PERSON_Q, _SPEECH_Q)),
         answer_kind="person",
         evidence=Evidence("speaking", "offered"),
         guideline="Listen to the voice and look at the numbered people: the right option is the one whose apparent "
                   "sex and age match the voice. Reject if two people match equally."),
    Task("Active_Speaker_Detection", "ASD", SPEECH, "active_speaker_detection",
         ("human_tracks", "person_count", "audio_tags", "speaker_scores"), "numbers",
         Rules("speech", "AsdParams", version="2"),
         ours=("voice_demographics", "demographics"),
         why_ours="L7's speaker is asked about only where the voice's class (L10) equals the face's (L3)",
         truth="L7 single speaking person whose L3 face class equals the L10 voice class",
         answer_from="the one person whose L7 speaker_scores row says speaking",
         answer_labels=("speaker_scores",), asks=Asks("the person who speaks", (_PERSON_Q, _SPEECH_Q)),
         answer_kind="person",
         evidence=Evidence("speaking", "offered"),
         guideline="Find who is speaking in the stretch asked about: lips moving in time with the voice. Reject if "
                   "the speaker is off screen or two people talk at once."),
    Task("Audio_Visual_Alignment_Detection", "AVAD", SPEECH, "audio_visual_alignment_detection",
         ("person_count", "audio_tags", "speaker_scores"), "reversed_audio", Rules("speech", "AvadParams"),
         ours=("human_tracks",), why_ours=_GROUPING, truth="seeded cut point",
         answer_from="a seeded cut point (L7 only gates)", reviewed=False,
         asks=Asks("the second from which sound and picture align", (_TIME_Q,)),
         answer_kind="time",
         evidence=Evidence("aligned", "none"),
         guideline="Sound and lips run together from one point on; before it the audio is reversed. The right "
                   "option is the second where speech becomes natural and in sync."),
    Task("Speech_Content_Matching", "SCM", SPEECH, "speech_content_matching", ("person_count", "audio_tags", "transcript"),
         "none", Rules("speech_content", "ScmParams", prompts=("SPEECH_DISTRACTORS",)),
         ours=("speaker_scores", "human_tracks"),
         why_ours="the paper's rule 'the person speaks' reads L7 (Table 9 omits it); " + _GROUPING,
         truth="L8 text; model distractors", answer_from="the L8 transcript text", answer_labels=("transcript",),
         reviewed=False, asks=Asks("what is said", (r"\b(?:sentences?|words|said|says|spoken|speech)\b",)),
         evidence=Evidence("speech", "none"),
         guideline="Listen to the speech: the right option is what is said, word for word in meaning; distractors "
                   "say something close but different. Reject if the speech is unclear."),
)

TASK_BY_NAME: dict[str, Task] = {t.name: t for t in TASKS}
TASK_BY_ABBREV: dict[str, Task] = {t.abbrev: t for t in TASKS}
TASK_BY_ASSET: dict[str, Task] = {t.asset: t for t in TASKS}
# Tasks whose answer depends on the soundtrack: audio goes to models that accept it.
AUDIO_TASKS: frozenset[str] = frozenset(t.name for t in TASKS if t.category == SPEECH)
# Not reviewed unless HVBENCH_REVIEW_EXCLUDE says otherwise: reliable by construction.
NOT_REVIEWED: tuple[str, ...] = tuple(t.abbrev for t in TASKS if not t.reviewed)
# abbrev -> what a human annotates (count | action) for the families whose truth is a human's
ANNOTATED: dict[str, str] = {t.abbrev: t.annotation for t in TASKS if t.annotation}


def task_info(name_or_abbrev: str) -> Task | None:
    """Look a task up by file stem or acronym (case-insensitive); None for a task outside the 16."""
    key = name_or_abbrev.strip()
    if key in TASK_BY_NAME:
        return TASK_BY_NAME[key]
    lowered = {k.lower(): v for k, v in {**TASK_BY_NAME, **TASK_BY_ABBREV}.items()}
    return lowered.get(key.lower())


def tasks_of(category: str) -> list[Task]:
    return [t for t in TASKS if t.category == category]
