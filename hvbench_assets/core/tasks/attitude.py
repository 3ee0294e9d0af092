"""AR (attitude recognition): the first half of the synthesis chain (caption, question) on the most-present
person; its steps are stored in synthesis_steps like the descriptive tasks'. The options are fixed.
That is why it imports up a floor, from core/synthesis (parsed_call, StepLog, question_kind)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.checks import question_kind
from hvbench_assets.core.synthesis.replies import Stop, parsed_call
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import ATTITUDE_CAPTION, ATTITUDE_QUESTION
from hvbench_assets.core.synthesis.replies import BadReply, json_object
from hvbench_assets.core.tasks.rules import Option, Verdict, most_present, persons, reject

ATTITUDES = ("Positive", "Negative", "Neutral", "Indeterminate")


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


def _attitude_qa(text: str | None) -> tuple[str, str]:
    obj = json_object(text)
    question = str(obj.get("question") or "").strip()
    attitude = str(obj.get("attitude") or "").strip().lower()
    if not question:
        raise BadReply("no question in reply")
    if why := question_kind(TASK_BY_ABBREV["AR"].asks, question):  # attitude options under a question that asks something else
        raise BadReply(why)
    if attitude not in ("positive", "negative", "neutral"):
        raise BadReply(f"attitude {attitude!r} is not positive, negative or neutral")
    return question, attitude


def build_ar(ctx: BuildContext) -> Draft | Pending:
    tids = tuple(ctx.verdict.target_track_ids)
    appearance = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    log = StepLog()
    caption = ctx.ask(ATTITUDE_CAPTION, video=ctx.red_box_video(tids), appearance=appearance)
    if not caption.ok:
        log.add("caption", {"error": caption.error}, "failed", call=caption)
        return Pending("failed", f"attitude caption call failed: {caption.error}", call_ids=[caption.call_id],
                       steps=log.steps)
    log.add("caption", {"raw": caption.text, "appearance": appearance}, call=caption)
    try:
        qa, (question, attitude), attempt = parsed_call(
            log, "question", lambda fb: ctx.ask(ATTITUDE_QUESTION, appearance=appearance, caption=caption.text,
                                                feedback=fb), _attitude_qa, "question")
    except Stop as stop:  # the synthesis rule: an unreadable reply is asked again once, then the raw text is kept
        return Pending(stop.status, stop.reason, call_ids=log.call_ids, rule=stop.rule, steps=log.steps)
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
