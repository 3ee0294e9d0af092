"""Blind leakage filter: every pooled question is asked WITHOUT its video, to text-only answering, once per
option rotation and blind model; a question answered right clearly more often than chance is removed.

    jobs = blind_jobs(pool_rows, models, all_rotations=True)
    rows = answer_blind(client, jobs)              # MllmClient: no frames, cached in model_calls
    verdicts = leakage_verdicts(rows, alpha=0.05, max_share=0.5)

The rule: with k right out of n parsed answers to a question with m options, the one-sided binomial test
against chance 1/m (scipy.stats.binomtest, alternative "greater") gives p; the question is removed when
p < alpha, or when k/n is above `max_share`. Unparsed replies count as wrong (a model that will not pick
is not evidence of leakage); failed calls are left out of n and reported. Replies are read by the
evaluation's own rules (core/scoring/extraction.py, a floor up but a leaf module), so "leaked" means exactly
"an evaluation would score it right without the video".
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


from hvbench_assets.core.scoring.extraction import PARSED, extract_option

LEAKAGE_CODE_VERSION = "leakage-v1"
BLIND_PROMPT_VERSION = "blind-v1"
LETTERS = string.ascii_uppercase


def blind_prompt(question: str, options: Sequence[str]) -> str:
    return (
        "Here is a multiple-choice question about a video you cannot see. Pick the option you think is most "
        "likely right anyway. Reply with the option's letter only.\n\n"
        f"Question: {question}\n\n"
        + "\n\n".join(f"Option {LETTERS[i]}: {t}" for i, t in enumerate(options)) + "\n\n"
        "Reply with one letter. Your option:"
    )


def rotate(options: Sequence[str], answer_index: int, shift: int) -> tuple[list[str], str]:
    """Option texts moved `shift` places down (A's text goes to B for shift 1), and the right letter then."""
    n = len(options)
    rotated = [options[(i - shift) % n] for i in range(n)]
    return rotated, LETTERS[(answer_index + shift) % n]


@dataclass(frozen=True)
class BlindJob:
    question_id: str
    task: str
    model: str
    rotation: int
    options: tuple[str, ...]  # in the order asked
    answer: str  # right letter as asked
    prompt: str


def blind_jobs(questions: Iterable[Mapping[str, Any]], models: Sequence[str], all_rotations: bool = True,
               ) -> list[BlindJob]:
    """One job per question x model x rotation (every rotation, or only the published order)."""
    jobs = []
    for q in questions:
        texts = [o["text"] for o in q["options"]]
        idx = [o["letter"] for o in q["options"]].index(q["answer"])
        for model in models:
            for shift in range(len(texts)) if all_rotations else (0,):
                opts, answer = rotate(texts, idx, shift)
                jobs.append(BlindJob(q["question_id"], q["task"], model, shift, tuple(opts), answer,
                                     blind_prompt(q["question"], opts)))
    return jobs


def score_reply(job: BlindJob, text: str | None, error: str | None) -> dict[str, Any]:
    if error is not None or text is None:
        return {"chosen": None, "correct": False, "status": "failed", "method": (error or "no reply")[:500]}
    ext = extract_option(text, [(LETTERS[i], t) for i, t in enumerate(job.options)])
    return {"chosen": ext.letter, "correct": ext.letter == job.answer, "status": ext.status, "method": ext.method}


def answer_blind(client, jobs: Sequence[BlindJob], params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Ask every job through the MLLM client with no frames (cached: a rerun sends nothing). One row per job
    for `blind_answers`; `transient` marks rows whose endpoint was down or rate limited after retries."""
    from hvbench_assets.core.mllm import ChatRequest

    requests = [ChatRequest(model=j.model, prompt=j.prompt, frames=(), params=dict(params or {}) or None,
                            context={"stage": "leakage", "question_id": j.question_id, "task": j.task,
                                     "rotation": j.rotation}) for j in jobs]
    results = client.chat_many(requests)
    rows = []
    for job, res in zip(jobs, results):
        rows.append({"question_id": job.question_id, "task": job.task, "model": job.model, "rotation": job.rotation,
                     "options": list(job.options), "answer": job.answer, "response": res.text,
                     "call_id": res.call_id, "transient": bool(res.transient), "fatal": bool(res.fatal),
                     **score_reply(job, res.text, res.error)})
    return rows


def binomial_p(k: int, n: int, chance: float) -> float:
    """One-sided P(X >= k) for X ~ Binomial(n, chance); 1.0 without answers."""
    from scipy.stats import binomtest  # here, not at import: loading the definitions stays light

    return float(binomtest(k, n, chance, alternative="greater").pvalue) if n else 1.0


@dataclass(frozen=True)
class LeakageVerdict:
    question_id: str
    task: str
    n_options: int
    n_answers: int
    n_correct: int
    n_failed: int
    share: float | None
    chance: float
    p_value: float
    removed: bool
    reason: str


def verdict(question_id: str, task: str, n_options: int, n_correct: int, n_answers: int, n_failed: int,
            alpha: float, max_share: float) -> LeakageVerdict:
    chance = 1.0 / n_options
    p = binomial_p(n_correct, n_answers, chance)
    share = n_correct / n_answers if n_answers else None
    if not n_answers:
        removed, reason = False, f"not tested: no blind answer ({n_failed} failed)"
    elif p < alpha:
        removed, reason = True, f"{n_correct}/{n_answers} right without video, p={p:.3g} < {alpha} against chance {chance:.2f}"
    elif share > max_share:
        removed, reason = True, f"{n_correct}/{n_answers} right without video, share {share:.2f} > {max_share}"
    else:
        removed, reason = False, f"{n_correct}/{n_answers} right without video, p={p:.3g}"
    return LeakageVerdict(question_id, task, n_options, n_answers, n_correct, n_failed, share, chance, p, removed, reason)


def leakage_verdicts(rows: Iterable[Mapping[str, Any]], alpha: float = 0.05, max_share: float = 0.5,
                     ) -> list[LeakageVerdict]:
    """One verdict per question from its blind answer rows (all models and rotations pooled)."""
    acc: dict[str, dict[str, Any]] = {}
    for r in rows:
        a = acc.setdefault(r["question_id"], {"task": r["task"], "n": len(r["options"]), "k": 0, "asked": 0, "failed": 0})
        if r["status"] == "failed":
            a["failed"] += 1
            continue
        a["asked"] += 1
        a["k"] += int(bool(r["correct"]) and r["status"] == PARSED)
    return [verdict(q, a["task"], a["n"], a["k"], a["asked"], a["failed"], alpha, max_share) for q, a in acc.items()]


def guessable(verdicts: Sequence[LeakageVerdict], n: int = 10) -> list[LeakageVerdict]:
    """The questions text alone answers best (highest share, then lowest p)."""
    tested = [v for v in verdicts if v.n_answers]
    return sorted(tested, key=lambda v: (-(v.share or 0), v.p_value, v.question_id))[:n]
