"""The distractor-included synthesis of one descriptive question:

    caption -> question (leak check) -> every answering model answers -> every model scores every
    candidate -> weighted totals -> the writer perturbs the runners-up -> option checks (one retry)

Each step is appended to a StepLog (-> synthesis_steps); the result is a Draft (a question whose truth
is the ensemble's winner) or a Pending (rejected / failed, with the steps so far and the raw text kept).
`caption_and_question` is the first half alone (AR uses it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.mllm.client import ChatResult
from hvbench_assets.core.synthesis import prompts as P
from hvbench_assets.core.synthesis.calls import SynthesisModels
from hvbench_assets.core.synthesis.checks import check_options, leak_check
from hvbench_assets.core.synthesis.ranking import BadReply, agreement, parse_scores, rank
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.synthesis.tasks import SynthesisTask
from hvbench_assets.core.synthesis.words import polarity
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.replies import json_object, normalise, person_sentence
from hvbench_assets.core.tasks.rules import LETTERS, Option


class Stop(Exception):
    """The chain ends here with this Pending (rejected or failed)."""

    def __init__(self, status: str, rule: str, reason: str):
        super().__init__(reason)
        self.status, self.rule, self.reason = status, rule, reason


def _retry_note(reason: str) -> str:
    return f"\nYour previous reply could not be used ({reason}). Reply again in exactly the requested format."


def parsed_call(log: StepLog, step: str, call: Callable[[str], ChatResult], parse: Callable[[str | None], Any],
                what: str) -> tuple[ChatResult, Any, int]:
    """A writer call whose reply must parse; an unreadable reply is asked again once (with a note, so the
    retry is a new request), then the chain fails keeping the raw text of both attempts."""
    feedback, raws = "", []
    for attempt in (1, 2):
        r = call(feedback)
        if not r.ok:
            log.add(step, {"error": r.error}, "failed", call=r, attempt=attempt)
            raise Stop("failed", step, f"{what} call failed: {r.error}")
        try:
            value = parse(r.text)
        except BadReply as exc:
            raws.append(r.text)
            log.add(step, {"raw": r.text, "error": str(exc)}, "failed", call=r, attempt=attempt)
            feedback = _retry_note(str(exc))
            continue
        return r, value, attempt
    raise Stop("failed", step, f"{what} unreadable twice: {log.steps[-1]['payload']['error']}; raw replies kept: "
                               + " || ".join(repr((t or "")[:300]) for t in raws))


def _flagged(keys: tuple[str, str]) -> Callable[[str | None], tuple[bool, str]]:
    flag_key, text_key = keys

    def parse(text):
        obj = json_object(text)
        flag, body = obj.get(flag_key), obj.get(text_key)
        if not isinstance(flag, bool):
            raise BadReply(f"{flag_key!r} is not true or false: {flag!r}")
        if not isinstance(body, str):
            raise BadReply(f"{text_key!r} is not a string")
        if flag and not body.strip():
            raise BadReply(f"{flag_key} is true but {text_key!r} is empty")
        return flag, body.strip()

    return parse


def _qa(text):
    obj = json_object(text)
    q, a = obj.get("question"), obj.get("answer")
    if not isinstance(q, str) or not q.strip() or not isinstance(a, str) or not a.strip():
        raise BadReply("reply needs a non-empty 'question' and 'answer'")
    return q.strip(), a.strip()


def _distractors(text):
    obj = json_object(text)
    items = obj.get("distractors")
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise BadReply("reply has no list of strings under 'distractors'")
    items = [" ".join(s.split()) for s in items if s.strip()]
    if len(items) != 3:
        raise BadReply(f"reply lists {len(items)} distractors, 3 wanted")
    return items


_LETTER_EMOTION = re.compile(r"\b([A-Z])\s*[-\u2013\u2014:]\s*([A-Za-z]+)")


def parse_answer(task: str, text: str | None, letters: tuple[str, ...] = ()) -> str:
    """An answering model's reply as an option: one sentence; H2T 'The person is ...'; EIC 'B-happy'."""
    if not text or not text.strip():
        raise BadReply("empty answer")
    if task == "H2T":
        return person_sentence(text)
    if task == "EIC":
        m = _LETTER_EMOTION.search(text)
        if not m or m.group(1) not in letters:
            raise BadReply(f"answer is not letter-emotion with a letter of {'/'.join(letters)}: {text[:80]!r}")
        return f"{m.group(1)}-{m.group(2).lower()}"
    return " ".join(text.strip().strip('"').split())


def answer_form(task: str, letters: tuple[str, ...] = ()) -> Callable[[str], str | None] | None:
    """The form every option of the task must have (H2T, EIC), as a check for distractors."""
    if task not in ("H2T", "EIC"):
        return None

    def form(text: str) -> str | None:
        try:
            parsed = parse_answer(task, text, letters)
        except BadReply:
            return "is not in the answer form" + (" 'The person is ...'" if task == "H2T" else " letter-emotion")
        return None if normalise(parsed) == normalise(text) else "is not in the answer form"

    return form


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
    letters: tuple[str, ...] = ()  # EIC


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
            r, (flag, caption), attempt = parsed_call(log, "caption", call, _flagged(task.caption_keys), "caption")
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
        q = P.EIC_FIXED_QUESTION.format(letters=", ".join(subject.letters), first=subject.letters[0])
        log.add("question", {"source": "fixed", "question": q, "answer": None})
        return q, None
    r, (question, answer), attempt = parsed_call(
        log, "question", lambda fb: models.write(task.question, caption=caption, appearance=subject.appearance,
                                                 feedback=fb), _qa, "question")
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
            text = parse_answer(task.abbrev, r.text if r.ok else None, subject.letters)
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
    log.add("total", {**ranking.as_dict(), "candidates": [vars(c) for c in candidates],
                      "winner_sources": win.sources, "agreement": agree})
    # 5-6. perturb the runners-up, check the four options; one retry with the problems named
    seeds = [candidates[i].text for i in ranking.order[1:4]]
    feedback, problems = "", []
    for attempt in (1, 2):
        r = models.write(task.perturb, question=question, truth=win.text,
                         seeds="\n".join(f"- {s}" for s in seeds), n_chars=len(win.text), feedback=feedback)
        try:
            if not r.ok:
                raise BadReply(r.error or "call failed")
            distractors = _distractors(r.text)
        except BadReply as exc:
            log.add("perturbation", {"raw": r.text, "error": str(exc), "seeds": seeds}, "failed", call=r,
                    attempt=attempt)
            problems = [str(exc)]
            feedback = _retry_note(str(exc))
            continue
        log.add("perturbation", {"seeds": seeds, "distractors": distractors, "raw": r.text}, call=r, attempt=attempt)
        check = check_options(win.text, distractors, task.length_band, form=answer_form(task.abbrev, subject.letters))
        log.add("check", {"options": [win.text, *distractors], **check.as_dict()}, "ok" if check.ok else "failed",
                attempt=attempt)
        if check.ok:
            return _draft(task, subject, log, question, win, distractors, seeds, ranking, check, candidates)
        problems = check.problems
        feedback = ("\nYour previous distractors were rejected: " + "; ".join(problems)
                    + ". Fix these problems.")
    raise Stop("failed", "option_check", "options failed the checks twice: " + "; ".join(problems))


def _draft(task, subject, log, question, win, distractors, seeds, ranking, check, candidates) -> Draft:
    details = {"candidates": [vars(c) for c in candidates], "ranking": ranking.as_dict(),
               "winner_sources": win.sources, "seeds": seeds, "length_ratios": check.length_ratios,
               "length_band": list(check.band)}
    extra = {"polarity": polarity(win.text)} if task.polarity else {}
    return Draft(question=question, truth=Option(win.text, "truth"),
                 distractors=[Option(d, "perturbation") for d in distractors], marking=subject.marking,
                 call_ids=log.call_ids, details=details, rule_params=extra, steps=log.steps)


def letters_for(track_ids, tracks) -> dict[int, str]:
    """EIC: letters A, B, ... for the offered tracks, left to right by their first face box."""
    by = {t.track_id: t for t in tracks}

    def x(tid):
        b = by[tid].boxes[0].face if tid in by and by[tid].boxes else (0, 0, 0, 0)
        return ((b[0] + b[2]) / 2, tid)

    return {tid: LETTERS[i] for i, tid in enumerate(sorted(track_ids, key=x))}


def build(task: SynthesisTask, ctx: BuildContext) -> Draft | Pending:
    """A family's build: the subject from the labels, then the chain."""
    labels, tids = ctx.labels, tuple(ctx.verdict.target_track_ids)
    if task.abbrev == "EIC":
        letters = letters_for(tids, labels.tracks)
        marking = {"kind": "letters", "letters": {str(t): c for t, c in letters.items()}}
    else:
        letters, marking = {}, {"kind": "red_box", "track_ids": sorted(tids)}
    appearance = " ".join((labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    facial = " ".join((labels.by_track("facial_description").get(t) or {}).get("text") or "" for t in tids
                      if (labels.by_track("facial_description").get(t) or {}).get("status") == "ok").strip()
    subject = Subject(marking, ctx.marked_video(marking), appearance or "not available", facial,
                      tuple(sorted(letters.values())))
    return synthesize(task, ctx.synthesis, subject)
