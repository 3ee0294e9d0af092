"""The distractor-included synthesis of one descriptive question, the same for every family:

    caption -> question (its recipe's ways, recipe.py) -> every answering model answers -> every model scores
    every candidate -> weighted totals -> the writer perturbs the runners-up -> option checks (one retry)

What differs per family is its Recipe (recipe.py), which the family's module passes in; the chain knows no family.
Each step is appended to the caller's StepLog (-> synthesis_steps); the result is a Written question whose truth
is the ensemble's winner, or `Stop` (rejected / failed; the log keeps the steps so far and the raw text).
Reading the writer's and the models' replies (and the one retry) is in replies.py; AR, AST and SCM use it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.synthesis import prompts as P
from hvbench_assets.core.synthesis.calls import SynthesisModels
from hvbench_assets.core.synthesis.checks import Asks, check_options, leak_check
from hvbench_assets.core.synthesis.ranking import agreement, parse_scores, rank
from hvbench_assets.core.synthesis.recipe import Recipe, Subject
from hvbench_assets.core.synthesis.replies import BadReply, Stop, distractor_list, normalise, retry_note
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.synthesis.words import polarity


@dataclass
class Candidate:
    text: str
    sources: list[str] = field(default_factory=list)  # "question" / "caption" and answering model names


@dataclass
class Written:
    """A question the chain wrote: the ensemble's winner as the truth and three checked perturbations."""

    question: str
    truth: str
    distractors: list[str]
    details: dict[str, Any]  # candidates, ranking, seeds, length ratios (stored with the rule params)
    rule_params: dict[str, Any]  # top-level rule_params entries (the truth's polarity)


def synthesize(recipe: Recipe, asks: Asks, models: SynthesisModels, subject: Subject, log: StepLog) -> Written:
    """One question by `recipe`; raises Stop when it is rejected or fails (`log` holds the steps either way)."""
    try:
        return _run(recipe, asks, models, subject, log)
    finally:
        models.flush()


def _run(recipe: Recipe, asks: Asks, models: SynthesisModels, subject: Subject, log: StepLog) -> Written:
    caption = recipe.caption.write(models, subject, log)
    question, preliminary = recipe.question.write(recipe, asks, models, subject, log, caption)
    form = recipe.form(subject.numbers)
    # 3. every answering model answers on the marked video
    candidates: list[Candidate] = []

    def offer(text: str, source: str) -> int:
        for i, c in enumerate(candidates):
            if normalise(c.text) == normalise(text):
                c.sources.append(source)
                return i + 1
        candidates.append(Candidate(text, [source]))
        return len(candidates)

    if preliminary:  # the draft answer of the question step (a caption that answers: its caption) is the first candidate
        log.add("answer", {"candidate": offer(preliminary, "question"), "text": preliminary, "source": "question"},
                model=models.writer.name, origin=log.last_call("question", "caption"))
    for spec, r in zip(models.answerers, models.each(recipe.answer, subject.video, question=question)):
        try:
            text = form.answer(r.text if r.ok else None)
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
    # a written question is checked again against the winner, which may be another model's answer than its draft
    leak = leak_check(question, win.text, recipe.leak_kind, recipe.leak_share, person=subject.appearance) \
        if recipe.question.prompt is not None else None
    log.add("total", {**ranking.as_dict(), "candidates": [vars(c) for c in candidates],
                      "winner_sources": win.sources, "agreement": agree,
                      "winner_leak": leak.found if leak else []}, "rejected" if leak and leak.leaked else "ok")
    if leak and leak.leaked:
        raise Stop("rejected", "question_leak", f"the question names the winning answer's key words {leak.found}")
    # 5-6. perturb the runners-up, check the four options; one retry with the problems named
    seeds = [candidates[i].text for i in ranking.order[1:4]]
    feedback, problems = "", []
    for attempt in (1, 2):
        r = models.write(recipe.perturb, question=question, truth=win.text,
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
        check = check_options(win.text, distractors, recipe.length_band, form=form)
        log.add("check", {"options": [win.text, *distractors], **check.as_dict()}, "ok" if check.ok else "failed",
                attempt=attempt)
        if check.ok:
            details = {"candidates": [vars(c) for c in candidates], "ranking": ranking.as_dict(),
                       "winner_sources": win.sources, "seeds": seeds, "length_ratios": check.length_ratios,
                       "length_band": list(check.band)}
            return Written(question, win.text, distractors, details,
                           {"polarity": polarity(win.text)} if recipe.polarity else {})
        problems = check.problems
        feedback = ("\nYour previous distractors were rejected: " + "; ".join(problems)
                    + f". Every option must be {form.name}. Fix these problems.")
    raise Stop("failed", "option_check", "options failed the checks twice: " + "; ".join(problems))
