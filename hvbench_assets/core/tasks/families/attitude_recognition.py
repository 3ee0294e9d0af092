"""AR, Attitude Recognition: the red-boxed person's attitude (positive, negative, neutral, or indeterminate). The
most-present person with an L4 appearance; a describer captions the red-box video and writes the question and its
answer (the first half of the synthesis chain, its steps stored in synthesis_steps like the descriptive
families'); the four options are fixed and the answer is provisional until a reviewer confirms it."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.checks import Asks, question_kind
from hvbench_assets.core.synthesis.replies import BadReply, Stop, json_object, parsed_call
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending, stopped
from hvbench_assets.core.tasks.family import EMOTION, FACE_GATE, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import SYSTEM
from hvbench_assets.core.tasks.rules import Option, Verdict, most_present, persons, reject

ATTITUDES = ("Positive", "Negative", "Neutral", "Indeterminate")
ASKS = Asks("the person's attitude (positive, negative, neutral)", (asks.ATTITUDE,),
            asks.ASKS_FEELING + (asks.ASKS_EMOTION,))


@dataclass(frozen=True)
class ArParams:
    min_people: int = 1


def select_ar(labels: ClipLabels, p: ArParams) -> Verdict:
    people = persons(labels)
    m = {"people": len(people)}
    target = most_present(people)
    if target is None:
        return reject("people", "people=0: no face track (L1)", m)
    appearance = [labels.by_track("appearance").get(t) for t in target.track_ids]
    if not any(a and a.get("status") == "ok" for a in appearance):
        return reject("appearance", f"no L4 appearance for the target track(s) {list(target.track_ids)}", m)
    m["target_frames"] = target.frames
    return Verdict(True, "ar", "the most-present person", m, target=list(target.track_ids),
                   target_track_ids=target.track_ids)


CAPTION = Prompt(
    name="task_attitude_caption",
    system=SYSTEM,
    user=("Look at the person inside the red box (appearance notes: {appearance}). Does this person show an "
          "attitude towards something or someone in the video, and is it positive, negative or neutral? "
          "Describe the attitude, what it is directed at and the visible cues, in at most 80 words."),
    n_frames=12,
    params={"temperature": 0.0, "max_tokens": 200},
)
QUESTION = Prompt(
    name="task_attitude_question",
    system=SYSTEM,
    user=("From the description below, write one multiple-choice question about the attitude of the person "
          "described as: {appearance}. Refer to the person by appearance, never by the attitude itself, and do "
          "not reveal the answer in the question. Reply with JSON only: "
          "{{\"question\": \"...\", \"attitude\": \"positive\" | \"negative\" | \"neutral\"}}.\n"
          "Description: {caption}{feedback}"),
    n_frames=0,
    params={"temperature": 0.0, "max_tokens": 200},
)


def _attitude_qa(text: str | None) -> tuple[str, str]:
    obj = json_object(text)
    question = str(obj.get("question") or "").strip()
    attitude = str(obj.get("attitude") or "").strip().lower()
    if not question:
        raise BadReply("no question in reply")
    if why := question_kind(ASKS, question):  # attitude options under a question that asks something else
        raise BadReply(why)
    if attitude not in ("positive", "negative", "neutral"):
        raise BadReply(f"attitude {attitude!r} is not positive, negative or neutral")
    return question, attitude


def build_ar(ctx: BuildContext) -> Draft | Pending:
    tids = tuple(ctx.verdict.target_track_ids)
    appearance = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    log = StepLog()
    caption = ctx.ask(CAPTION, video=ctx.red_box_video(tids), appearance=appearance)
    if not caption.ok:
        log.add("caption", {"error": caption.error}, "failed", call=caption)
        return Pending("failed", f"attitude caption call failed: {caption.error}", call_ids=[caption.call_id],
                       steps=log.steps)
    log.add("caption", {"raw": caption.text, "appearance": appearance}, call=caption)
    try:
        qa, (question, attitude), attempt = parsed_call(
            log, "question", lambda fb: ctx.ask(QUESTION, appearance=appearance, caption=caption.text,
                                                feedback=fb), _attitude_qa, "question")
    except Stop as stop:  # the synthesis rule: an unreadable reply is asked again once, then the raw text is kept
        return stopped(stop, log)
    log.add("question", {"raw": qa.text, "question": question, "answer": attitude}, call=qa, attempt=attempt)
    truth = attitude.capitalize()
    return Draft(
        question=question,
        truth=Option(truth, "model"),
        distractors=[Option(a, "fixed") for a in ATTITUDES if a != truth],
        marking={"kind": "red_box", "track_ids": list(tids)},
        provisional=True,  # one describer's answer (AR has no ensemble): a reviewer confirms it
        call_ids=log.call_ids, details={"caption": caption.text}, steps=log.steps,
    )


FAMILY = TaskFamily(
    name="Attitude_Recognition", abbrev="AR", category=EMOTION, asset="attitude_recognition",
    labels=("human_tracks", "appearance"), ours=("person_count",),
    why_ours="the most-present person is an L2 identity (its tracks merged)", marking="red_box", face_gate=FACE_GATE,
    select=select_ar, build=build_ar, params=ArParams(),
    version="2",  # 2: its question must ask for an attitude (the question-kind check, `asks`)
    model_prompts=(CAPTION, QUESTION), question_by_model=True, records_steps=True,
    asks=ASKS, answer_kind="attitude",
    truth="one describer's answer (the synthesis's first half: caption, question; provisional)",
    answer_from="a model's answer", answer_labels=("appearance",),
    evidence=Evidence("presence", "answer"),
    guideline="Judge the boxed person's attitude to what they talk about or look at: positive, neutral, "
              "negative, or cannot be determined. Prefer 'cannot be determined' over a guess.",
)
