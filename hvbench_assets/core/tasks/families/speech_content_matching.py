"""SCM, Speech Content Matching: which sentence is said. One person, who speaks (L7), a clip longer than 5 s and a
trusted English transcript (L8) longer than 35 characters; the truth is the transcript, and a model writes three
sentences of similar topic and length (within 30 %). Reliable by construction: not reviewed by default."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.replies import BadReply, Stop, json_object, normalise, parsed_call, string_list
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending, stopped
from hvbench_assets.core.tasks.family import SPEECH, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import SYSTEM
from hvbench_assets.core.tasks.rules import (
    SPEAKERS_AS_PEOPLE,
    Option,
    Verdict,
    check_range,
    person_count,
    persons,
    reject,
    speaking_persons,
    speech_verdict,
)


@dataclass(frozen=True)
class ScmParams:
    people: int = 1
    min_duration_s: float = 5.0  # strictly longer
    min_chars: int = 35  # strictly more
    length_band: float = 0.30  # distractor length within +-30 % of the truth's


PARAMS = ScmParams()
DISTRACTORS = Prompt(
    name="task_speech_distractors",
    system=SYSTEM,
    user=("Here is a sentence someone says in a video:\n\"{text}\"\nWrite three different sentences with a "
          "similar topic and meaning and about the same length ({n_chars} characters, within 30 %), each "
          "clearly different in wording from the original and from each other, so that a listener could tell "
          "which one was really said. Reply with JSON only: {{\"sentences\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 400},
)


def trusted_english(row: dict | None) -> bool:
    """A transcript the benchmark may quote: recognised without doubt, and English."""
    return bool(row) and row.get("status") == "ok" and row.get("language") == "en" and bool(row.get("text"))


def select_scm(labels: ClipLabels, p: ScmParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "people", "people", person_count(labels), p.people, p.people):
        return v
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    if v := speech_verdict(labels, "speech", m):
        return v
    people = persons(labels)
    speakers = speaking_persons(labels, people)
    if len(speakers) != 1:
        return reject("speaker", f"speaking persons={len(speakers)} (L7): the one person must speak", m)
    row = labels.one("transcript") or {}
    m["language"], m["transcript_status"] = row.get("language"), row.get("status")
    if not trusted_english(row):
        return reject("english", f"transcript status={row.get('status')} language={row.get('language')}: "
                                 "not a trusted English transcript (L8)", m)
    text = " ".join(row["text"].split())
    if v := check_range(m, "chars", "chars", len(text), lo=p.min_chars, lo_open=True):
        return v
    return Verdict(True, "scm", "one speaking person with an English transcript", m, target=list(speakers[0].track_ids),
                   target_track_ids=speakers[0].track_ids)


def check_sentences(truth: str, candidates: list[str], band: float) -> tuple[list[str], list[str]]:
    """(kept, problems): kept sentences differ from the truth and from each other and have a length
    within `band` of the truth's."""
    kept, problems, seen = [], [], {normalise(truth)}
    for s in candidates:
        n = normalise(s)
        if n in seen:
            problems.append(f"duplicate or copy of the truth: {s!r}")
        elif abs(len(s) - len(truth)) > band * len(truth):
            problems.append(f"length {len(s)} outside {len(truth)}+-{band:.0%}: {s!r}")
        else:
            kept.append(s)
            seen.add(n)
    return kept, problems


def build_scm(ctx: BuildContext) -> Draft | Pending:
    truth = " ".join((ctx.labels.one("transcript") or {})["text"].split())
    band = ctx.params.length_band

    def parse(text):  # three sentences of the truth's kind (length within the band), or asked again once
        kept, problems = check_sentences(truth, string_list(json_object(text), "sentences", 3), band)
        if len(kept) < 3:
            raise BadReply("distractors failed the checks: " + "; ".join(problems))
        return kept, problems

    log = StepLog()
    try:
        r, (kept, problems), attempt = parsed_call(
            log, "perturbation", lambda fb: ctx.ask(DISTRACTORS, text=truth, n_chars=len(truth), feedback=fb),
            parse, "distractor reply")
    except Stop as stop:
        return stopped(stop, log, rule="distractors")
    log.add("perturbation", {"raw": r.text, "distractors": kept}, call=r, attempt=attempt)
    return Draft(
        question="Which of these sentences is spoken in the video?",
        truth=Option(truth, "truth"),
        distractors=[Option(s, "model") for s in kept[:3]],
        marking={"kind": "none"}, call_ids=log.call_ids,
        details={"length_ratios": [round(len(s) / len(truth), 2) for s in kept[:3]], "rejected": problems,
                 "attempt": attempt},
    )


FAMILY = TaskFamily(
    name="Speech_Content_Matching", abbrev="SCM", category=SPEECH, asset="speech_content_matching",
    labels=("person_count", "audio_tags", "transcript"), ours=("speaker_scores", "human_tracks"),
    why_ours="the paper's rule 'the person speaks' reads L7 (Table 9 omits it); " + SPEAKERS_AS_PEOPLE,
    marking="none",
    select=select_scm, build=build_scm, params=PARAMS, model_prompts=(DISTRACTORS,),
    asks=Asks("what is said", (r"\b(?:sentences?|words|said|says|spoken|speech)\b",)),
    options_check=lambda truth, distractors, numbers=(): check_sentences(truth, distractors, PARAMS.length_band)[1],
    truth="L8 text; model distractors", answer_from="the L8 transcript text", answer_labels=("transcript",),
    evidence=Evidence("speech", "none"),
    guideline="Listen to the speech: the right option is what is said, word for word in meaning; distractors "
              "say something close but different. Reject if the speech is unclear.",
    reviewed=False,
)
