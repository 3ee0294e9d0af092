"""Repair instead of removal: a question the blind models answer goes back to the synthesis's perturbation
step with what they chose as feedback, and the new options are tested blind again, at most `max_rounds` times.

    out = repair_leaky(client, writer, pooled, answers, verdicts, models, max_rounds=2, ...)
    out.verdicts    # final verdict per question (repaired ones carry `repair_round`)
    out.answers     # every blind answer of every round (`round` 0 = the first test)
    out.steps       # one row per round and step (perturbation, check, blind) for `leakage_repairs`
    out.options     # question_id -> the repaired options (truth kept at its letter)

Only questions whose wrong options came from the perturbation step (the six distractor-included tasks) can
be repaired; the others stay removed. The writer (the describer) gets the task's own perturbation prompt,
the current wrong options as drafts, and a note naming how often the blind models picked each option;
the edited options pass the synthesis's option checks before they are asked again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.benchmark.leakage import LETTERS, LeakageVerdict, answer_blind, blind_jobs, leakage_verdicts

REPAIR_CODE_VERSION = "repair-v1"
_EDITABLE = ("perturbation", "repair")  # option origins a repair may edit (a later round edits the last one's)


def repairable(row: Mapping[str, Any]) -> bool:
    """A pooled question of a distractor-included synthesis task whose wrong options are perturbations."""
    from hvbench_assets.core.synthesis.tasks import SYNTHESIS_TASKS

    return row.get("abbrev") in SYNTHESIS_TASKS and any(o.get("origin") in _EDITABLE for o in row["options"])


def blind_feedback(row: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> str:
    """What the blind models chose, per option text, as a note for the writer."""
    picks: Counter = Counter()
    asked = 0
    for a in answers:
        if a["status"] == "failed":
            continue
        asked += 1
        if a["chosen"]:
            picks[a["options"][LETTERS.index(a["chosen"])]] += 1
    truth = next(o["text"] for o in row["options"] if o["letter"] == row["answer"])
    listing = "; ".join(f"{'the correct answer' if o['text'] == truth else repr(o['text'])}: {picks.get(o['text'], 0)}"
                        for o in row["options"])
    return ("\nModels that could NOT see the video still picked the correct answer in "
            f"{picks.get(truth, 0)} of {asked} tries (picks per option: {listing}), so the text alone gives it away. "
            "Edit the wrong options so that, without the video, none of the four stands out from the others: same "
            "style, detail and length as the correct answer, nothing that makes it look like the odd one out, "
            "while each stays clearly wrong for the video.")


def _letters(row: Mapping[str, Any]) -> tuple[str, ...]:
    """EIC: the person letters its letter-emotion options use."""
    return tuple(sorted({o["text"].strip()[:1].upper() for o in row["options"] if o["text"].strip()}))


def with_distractors(row: Mapping[str, Any], distractors: Sequence[str]) -> list[dict]:
    """The options with the perturbation ones replaced in order; the truth keeps its letter."""
    new, it = [], iter(distractors)
    for o in row["options"]:
        if o.get("origin") in _EDITABLE and o["letter"] != row["answer"]:
            text = next(it, None)
            new.append({**o, "text": text, "origin": "repair"} if text is not None else dict(o))
        else:
            new.append(dict(o))
    return new


@dataclass
class RepairOutcome:
    verdicts: list[LeakageVerdict]
    answers: list[dict]
    steps: list[dict] = field(default_factory=list)
    options: dict[str, list[dict]] = field(default_factory=dict)
    repaired_round: dict[str, int] = field(default_factory=dict)  # question_id -> round whose options passed


def _perturb(client, writer: str, row: Mapping[str, Any], feedback: str, round_: int):
    """(distractors or None, step rows) for one repair attempt."""
    from hvbench_assets.core.synthesis.checks import check_options
    from hvbench_assets.core.synthesis.forms import answer_form
    from hvbench_assets.core.synthesis.replies import BadReply, distractor_list
    from hvbench_assets.core.synthesis.tasks import SYNTHESIS_TASKS

    task = SYNTHESIS_TASKS[row["abbrev"]]
    truth = next(o["text"] for o in row["options"] if o["letter"] == row["answer"])
    seeds = [o["text"] for o in row["options"] if o["letter"] != row["answer"]]
    prompt = task.perturb
    r = client.chat(writer, prompt.user.format(question=row["question"], truth=truth, n_chars=len(truth),
                                               seeds="\n".join(f"- {s}" for s in seeds), feedback=feedback),
                    system=prompt.system, params=prompt.params,
                    context={"stage": "leakage_repair", "question_id": row["question_id"], "round": round_})
    base = {"question_id": row["question_id"], "task": row["task"], "round": round_, "call_id": r.call_id}
    try:
        if r.error or not r.text:
            raise BadReply(r.error or "empty reply")
        distractors = distractor_list(r.text)
    except BadReply as exc:
        return None, [{**base, "step": "perturbation", "status": "failed",
                       "payload": {"seeds": seeds, "feedback": feedback, "raw": r.text, "error": str(exc)}}]
    check = check_options(truth, distractors, task.length_band, form=answer_form(task.abbrev, _letters(row)))
    steps = [{**base, "step": "perturbation", "status": "ok",
              "payload": {"seeds": seeds, "feedback": feedback, "distractors": distractors, "raw": r.text}},
             {**base, "call_id": None, "step": "check", "status": "ok" if check.ok else "failed",
              "payload": {"options": [truth, *distractors], **check.as_dict()}}]
    return (distractors if check.ok else None), steps


def repair_leaky(client, writer: str | None, pooled: Sequence[Mapping[str, Any]], answers: Sequence[dict],
                 verdicts: Sequence[LeakageVerdict], models: Sequence[str], max_rounds: int, alpha: float,
                 max_share: float, all_rotations: bool = True, params: Mapping[str, Any] | None = None,
                 ) -> RepairOutcome:
    """Up to `max_rounds` rounds: every removed, repairable question is perturbed again with the blind picks
    as feedback; options passing the checks are asked blind again (with `models`, as in the first test)
    and judged by the same rule. A question stays in the rounds until it passes or the rounds run out."""
    answers = [{**a, "round": a.get("round", 0)} for a in answers]
    final = {v.question_id: v for v in verdicts}
    out = RepairOutcome(list(verdicts), answers)
    if max_rounds <= 0 or not writer:
        return out
    rows = {r["question_id"]: dict(r) for r in pooled}
    latest = {qid: [a for a in answers if a["question_id"] == qid] for qid in rows}
    rejected: dict[str, list[str]] = {}  # question_id -> the option-check problems of its last attempt
    for round_ in range(1, max_rounds + 1):
        todo = [rows[q] for q, v in final.items() if v.removed and q in rows and repairable(rows[q])]
        if not todo:
            break
        candidates = {}
        for row in todo:
            qid = row["question_id"]
            note = blind_feedback(row, latest[qid])
            if rejected.get(qid):  # the same request again would get the same (cached) reply
                note += " Your previous edit was rejected: " + "; ".join(rejected[qid]) + "."
            distractors, steps = _perturb(client, writer, row, note, round_)
            out.steps += steps
            rejected[qid] = [] if distractors is not None else \
                (steps[-1]["payload"].get("problems") or [steps[-1]["payload"].get("error", "unusable reply")])
            if distractors is not None:
                candidates[row["question_id"]] = {**row, "options": with_distractors(row, distractors)}
        if not candidates:
            continue
        new_answers = [{**a, "round": round_} for a in answer_blind(
            client, blind_jobs(candidates.values(), models, all_rotations=all_rotations), params=params)]
        out.answers += new_answers
        for v in leakage_verdicts(new_answers, alpha=alpha, max_share=max_share):
            qid = v.question_id
            latest[qid] = [a for a in new_answers if a["question_id"] == qid]
            rows[qid] = candidates[qid]
            out.steps.append({"question_id": qid, "task": v.task, "round": round_, "step": "blind", "call_id": None,
                              "status": "removed" if v.removed else "kept",
                              "payload": {"n_correct": v.n_correct, "n_answers": v.n_answers, "p_value": v.p_value,
                                          "options": [o["text"] for o in candidates[qid]["options"]],
                                          "reason": v.reason}})
            if not v.removed and v.n_answers:
                out.options[qid] = candidates[qid]["options"]
                out.repaired_round[qid] = round_
                v = LeakageVerdict(**{**v.__dict__, "reason": f"repaired in round {round_}: {v.reason}"})
            elif v.removed:
                v = LeakageVerdict(**{**v.__dict__, "reason": f"still answered blind after repair round {round_}: "
                                                              f"{v.reason}"})
            final[qid] = v
    out.verdicts = [final[v.question_id] for v in verdicts]
    return out


def repair_counts(verdicts: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per task: tested / removed / repaired (verdict rows with `repair_round`)."""
    out: dict[str, dict[str, int]] = {}
    for v in verdicts:
        c = out.setdefault(v["task"], {"pooled": 0, "tested": 0, "removed": 0, "repaired": 0})
        c["pooled"] += 1
        c["tested"] += int(bool(v["n_answers"]))
        c["removed"] += int(bool(v["removed"]))
        c["repaired"] += int(bool(v.get("repair_round")))
    return out
