"""The distractor-included synthesis of one descriptive question:

    caption -> question (kind and leak checks) -> every answering model answers -> every model scores every
    candidate -> weighted totals -> the writer perturbs the runners-up -> option checks (one retry)

Each step is appended to a StepLog (-> synthesis_steps); the result is a Draft (a question whose truth
is the ensemble's winner) or a Pending (rejected / failed, with the steps so far and the raw text kept).
Reading the writer's and the models' replies (and the one retry) is in replies.py; AR uses it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.synthesis import prompts as P
from hvbench_assets.core.synthesis.calls import SynthesisModels
from hvbench_assets.core.synthesis.checks import check_options, leak_check, question_kind
from hvbench_assets.core.synthesis.ranking import agreement, parse_scores, rank
from hvbench_assets.core.synthesis.replies import (
    BadReply,
    Stop,
    answer_form,
    distractor_list,
    flagged,
    parse_answer,
    parsed_call,
    question_answer,
    retry_note,
)
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.synthesis.tasks import SynthesisTask
from hvbench_assets.core.synthesis.words import polarity
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.replies import normalise, person_sentence
from hvbench_assets.core.tasks.rules import Option


@dataclass
class Candidate:
    text: str
    sources: list[str] = field(default_factory=list)  # "question" / "caption" and answering model names


@dataclass
class Subject:
    """What the chain is about: the marked video, the person's appearance, the labels' caption material."""

    marking: dict
    video: Any  # Path of the question video
    appearance: str
    facial: str = ""  # L5 of the target (ER, ETA)
    numbers: tuple[int, ...] = ()  # EIC: the offered people's numbers


def caption_and_question(task: SynthesisTask, models: SynthesisModels, subject: Subject, log: StepLog
                         ) -> tuple[str, str | None]:
    """Steps 1-2: the question and the preliminary answer (None when the question is fixed and has none)."""
    caption = ""
    if task.abbrev == "ER":
        caption = subject.facial
        log.add("caption", {"source": "labels", "facial_description": subject.facial,
                            "appearance": subject.appearance})
    elif task.caption is not None:
        call = (lambda fb: models.write(task.caption, subject.video, appearance=subject.appearance,
                                        facial=subject.facial, feedback=fb))
        if task.caption_keys:
            r, (flag, caption), attempt = parsed_call(log, "caption", call, flagged(task.caption_keys), "caption")
            log.add("caption", {"raw": r.text, "parsed": {task.caption_keys[0]: flag, task.caption_keys[1]: caption}},
                    "ok" if flag else "rejected", call=r, attempt=attempt)
            if not flag:
                raise Stop("rejected", task.caption_rule,
                           f"{task.caption_keys[0]}=false in the task caption ({r.call_id[:12]})")
        else:
            r, caption, attempt = parsed_call(log, "caption", call, person_sentence, "caption")
            log.add("caption", {"raw": r.text, "parsed": caption}, call=r, attempt=attempt)
    if task.abbrev == "H2T":
        log.add("question", {"source": "fixed", "question": P.H2T_FIXED_QUESTION, "answer": caption})
        return P.H2T_FIXED_QUESTION, caption
    if task.abbrev == "EIC":
        q = P.EIC_FIXED_QUESTION.format(numbers=", ".join(map(str, subject.numbers)), first=subject.numbers[0])
        log.add("question", {"source": "fixed", "question": q, "answer": None})
        return q, None
    form = answer_form(task.abbrev, subject.numbers)

    def parse(text):  # the question asks what the options answer, and the draft answer is an option too
        q, a = question_answer(text)
        if why := question_kind(task.abbrev, q):
            raise BadReply(why)
        if form and (why := form.fits(a)):
            raise BadReply(f"the answer {why} ({form.name} wanted): {a!r}")
        return q, a

    r, (question, answer), attempt = parsed_call(
        log, "question", lambda fb: models.write(task.question, caption=caption, appearance=subject.appearance,
                                                 feedback=fb), parse, "question")
    leak = leak_check(question, answer, task.leak_kind, task.leak_share, person=subject.appearance)
    payload = {"question": question, "answer": answer, "key_words": leak.key_words, "leaked": leak.found,
               "allowed_share": leak.allowed_share}
    log.add("question", payload, "rejected" if leak.leaked else "ok", call=r, attempt=attempt)
    if leak.leaked:
        raise Stop("rejected", "question_leak",
                   f"the question names the answer's key words {leak.found} ({r.call_id[:12]})")
    return question, answer


def synthesize(task: SynthesisTask, models: SynthesisModels, subject: Subject) -> Draft | Pending:
    log = StepLog()
    try:
        return _run(task, models, subject, log)
    except Stop as stop:
        return Pending(stop.status, stop.reason, call_ids=log.call_ids, rule=stop.rule, steps=log.steps)
    finally:
        models.flush()


def _run(task: SynthesisTask, models: SynthesisModels, subject: Subject, log: StepLog) -> Draft:
    question, preliminary = caption_and_question(task, models, subject, log)
    # 3. every answering model answers on the marked video
    candidates: list[Candidate] = []

    def offer(text: str, source: str) -> int:
        for i, c in enumerate(candidates):
            if normalise(c.text) == normalise(text):
                c.sources.append(source)
                return i + 1
        candidates.append(Candidate(text, [source]))
        return len(candidates)

    if preliminary:  # the draft answer of the question step (H2T: its caption) is the first candidate
        log.add("answer", {"candidate": offer(preliminary, "question"), "text": preliminary, "source": "question"},
                model=models.writer.name, origin=log.last_call("question", "caption"))
    for spec, r in zip(models.answerers, models.each(task.answer, subject.video, question=question)):
        try:
            text = parse_answer(task.abbrev, r.text if r.ok else None, subject.numbers)
        except BadReply as exc:
            log.add("answer", {"raw": r.text, "error": r.error or str(exc)}, "failed", call=r, model=spec.name)
            continue
        log.add("answer", {"candidate": offer(text, spec.name), "text": text, "raw": r.text}, call=r, model=spec.name)
    if len(candidates) < 2:
        raise Stop("failed", "answers", f"{len(candidates)} usable candidate answer(s); the ranking needs 2")
    # 4. every answering model scores every candidate; weighted totals
    listing = "\n".join(f"{i}. {c.text}" for i, c in enumerate(candidates, 1))
    scores: dict[str, dict[int, float]] = {}
    for spec, r in zip(models.answerers, models.each(P.SCORE, subject.video, question=question, candidates=listing)):
        try:
            if not r.ok:
                raise BadReply(r.error or "call failed")
            per = parse_scores(r.text, len(candidates))
        except BadReply as exc:
            log.add("score", {"raw": r.text, "error": str(exc)}, "failed", call=r, model=spec.name, weight=spec.weight)
            continue
        scores[spec.name] = per
        log.add("score", {"scores": {str(k): v for k, v in per.items()}, "raw": r.text}, call=r, model=spec.name,
                weight=float(spec.weight))
    if not scores:
        raise Stop("failed", "scores", "no answering model returned usable scores")
    ranking = rank(scores, models.weights, len(candidates))
    win = candidates[ranking.winner]
    agree = agreement(win.sources, [m.name for m in models.answerers])
    # the winner may be another model's answer than the one the question was checked against
    leak = leak_check(question, win.text, task.leak_kind, task.leak_share, person=subject.appearance) \
        if task.question is not None else None
    log.add("total", {**ranking.as_dict(), "candidates": [vars(c) for c in candidates],
                      "winner_sources": win.sources, "agreement": agree,
                      "winner_leak": leak.found if leak else []}, "rejected" if leak and leak.leaked else "ok")
    if leak and leak.leaked:
        raise Stop("rejected", "question_leak", f"the question names the winning answer's key words {leak.found}")
    # 5-6. perturb the runners-up, check the four options; one retry with the problems named
    seeds = [candidates[i].text for i in ranking.order[1:4]]
    form = answer_form(task.abbrev, subject.numbers)
    feedback, problems = "", []
    for attempt in (1, 2):
        r = models.write(task.perturb, question=question, truth=win.text,
                         seeds="\n".join(f"- {s}" for s in seeds), n_chars=len(win.text), feedback=feedback)
        try:
            if not r.ok:
                raise BadReply(r.error or "call failed")
            distractors = distractor_list(r.text)
        except BadReply as exc:
            log.add("perturbation", {"raw": r.text, "error": str(exc), "seeds": seeds}, "failed", call=r,
                    attempt=attempt)
            problems = [str(exc)]
            feedback = retry_note(str(exc))
            continue
        log.add("perturbation", {"seeds": seeds, "distractors": distractors, "raw": r.text}, call=r, attempt=attempt)
        check = check_options(win.text, distractors, task.length_band, form=form)
        log.add("check", {"options": [win.text, *distractors], **check.as_dict()}, "ok" if check.ok else "failed",
                attempt=attempt)
        if check.ok:
            return _draft(task, subject, log, question, win, distractors, seeds, ranking, check, candidates)
        problems = check.problems
        feedback = ("\nYour previous distractors were rejected: " + "; ".join(problems)
                    + (f". Every option must be {form.name}" if form else "") + ". Fix these problems.")
    raise Stop("failed", "option_check", "options failed the checks twice: " + "; ".join(problems))


def _draft(task, subject, log, question, win, distractors, seeds, ranking, check, candidates) -> Draft:
    details = {"candidates": [vars(c) for c in candidates], "ranking": ranking.as_dict(),
               "winner_sources": win.sources, "seeds": seeds, "length_ratios": check.length_ratios,
               "length_band": list(check.band)}
    extra = {"polarity": polarity(win.text)} if task.polarity else {}
    return Draft(question=question, truth=Option(win.text, "truth"),
                 distractors=[Option(d, "perturbation") for d in distractors], marking=subject.marking,
                 call_ids=log.call_ids, details=details, rule_params=extra, steps=log.steps)


def build(task: SynthesisTask, ctx: BuildContext) -> Draft | Pending:
    """A family's build: the subject from the labels, then the chain."""
    labels, tids = ctx.labels, tuple(ctx.verdict.target_track_ids)
    if task.abbrev == "EIC":
        numbers = {t: ctx.numbers[t] for t in tids}  # the clip's person numbers (core/vision number_tracks)
        marking = {"kind": "numbers", "numbers": {str(t): n for t, n in numbers.items()}}
    else:
        numbers, marking = {}, {"kind": "red_box", "track_ids": sorted(tids)}
    appearance = " ".join((labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    facial = " ".join((labels.by_track("facial_description").get(t) or {}).get("text") or "" for t in tids
                      if (labels.by_track("facial_description").get(t) or {}).get("status") == "ok").strip()
    subject = Subject(marking, ctx.marked_video(marking), appearance or "not available", facial,
                      tuple(sorted(numbers.values())))
    return synthesize(task, ctx.synthesis, subject)
