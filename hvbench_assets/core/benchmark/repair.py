"""Repair instead of removal: a question the blind models answer goes back to the synthesis's perturbation
step with what they chose as feedback, and the new options are tested blind again, at most `max_rounds` times.

    out = repair_leaky(client, writer, pooled, answers, verdicts, models, max_rounds=2, ...)
    out.verdicts    # final verdict per question (repaired ones carry `repair_round`)
    out.answers     # every blind answer of every round (`round` 0 = the first test)
    out.steps       # one row per round and step (perturbation, check, blind) for `leakage_repairs`
    out.options     # question_id -> the repaired options (truth kept at its letter)
    synthesis_step_rows(out, pooled, verdicts, "bench", writer)  # the rounds as synthesis_steps rows

Each round is also appended to the question's `synthesis_steps` (steps blind / repair / repair_check after the
synthesis chain), so `hvbench explain` shows the chain and its repairs as one sequence.

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
from hvbench_assets.core.tasks.rules import named_number

REPAIR_CODE_VERSION = "repair-v2"  # v2: the rounds are also synthesis_steps rows
_EDITABLE = ("perturbation", "repair")  # option origins a repair may edit (a later round edits the last one's)


def repairable(row: Mapping[str, Any]) -> bool:
    """A pooled question of a distractor-included synthesis task whose wrong options are perturbations."""
    from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV

    family = TASK_BY_ABBREV.get(row.get("abbrev") or "")
    return family is not None and family.synthesis is not None and \
        any(o.get("origin") in _EDITABLE for o in row["options"])


def blind_picks(answers: Sequence[Mapping[str, Any]]) -> tuple[Counter, int]:
    """(how often each option text was chosen, answers that came back) over blind answers of any rotation."""
    picks: Counter = Counter()
    asked = 0
    for a in answers:
        if a["status"] == "failed":
            continue
        asked += 1
        if a["chosen"]:
            picks[a["options"][LETTERS.index(a["chosen"])]] += 1
    return picks, asked


def blind_feedback(row: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> str:
    """What the blind models chose, per option text, as a note for the writer."""
    picks, asked = blind_picks(answers)
    truth = next(o["text"] for o in row["options"] if o["letter"] == row["answer"])
    listing = "; ".join(f"{'the correct answer' if o['text'] == truth else repr(o['text'])}: {picks.get(o['text'], 0)}"
                        for o in row["options"])
    return ("\nModels that could NOT see the video still picked the correct answer in "
            f"{picks.get(truth, 0)} of {asked} tries (picks per option: {listing}), so the text alone gives it away. "
            "Edit the wrong options so that, without the video, none of the four stands out from the others: same "
            "style, detail and length as the correct answer, nothing that makes it look like the odd one out, "
            "while each stays clearly wrong for the video.")


def _numbers(row: Mapping[str, Any]) -> tuple[int, ...]:
    """EIC: the person numbers its number-emotion options use."""
    return tuple(sorted({n for o in row["options"] if (n := named_number(o["text"])) is not None}))


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
    from hvbench_assets.core.synthesis.replies import BadReply, distractor_list
    from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV

    recipe = TASK_BY_ABBREV[row["abbrev"]].synthesis  # the family's own perturbation prompt, length band and form
    truth = next(o["text"] for o in row["options"] if o["letter"] == row["answer"])
    seeds = [o["text"] for o in row["options"] if o["letter"] != row["answer"]]
    prompt = recipe.perturb
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
    check = check_options(truth, distractors, recipe.length_band, form=recipe.form(_numbers(row)))
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


def synthesis_step_rows(out: RepairOutcome, pooled: Sequence[Mapping[str, Any]], first: Sequence[LeakageVerdict],
                        benchmark: str, writer: str | None) -> dict[str, list[dict]]:
    """question_id -> its repair rounds as synthesis_steps rows (without video, task, seq): the first blind
    test (round 0) that sent it to repair, then per round the writer's edit (options before and after, the
    feedback it got), the option checks and the blind re-test, each blind row with the picks per option."""
    rows = {r["question_id"]: r for r in pooled}
    first_by = {v.question_id: v for v in first}
    models = sorted({a["model"] for a in out.answers if a.get("model")})
    out_rows: dict[str, list[dict]] = {}

    def blind_row(qid: str, round_: int, options: list[str], v: Mapping[str, Any], status: str) -> dict:
        picks, _ = blind_picks([a for a in out.answers if a["question_id"] == qid and a["round"] == round_])
        return {"step": "blind", "status": status, "model": None, "call_id": None, "attempt": 1, "payload": {
            "benchmark": benchmark, "round": round_, "models": models, "options": options,
            "picks": {o: picks.get(o, 0) for o in options}, **v}}

    for s in out.steps:
        qid, round_, payload = s["question_id"], s["round"], s["payload"]
        steps = out_rows.get(qid)
        if steps is None:
            v = first_by[qid]
            steps = out_rows[qid] = [blind_row(qid, 0, [o["text"] for o in rows[qid]["options"]],
                                               {"n_correct": v.n_correct, "n_answers": v.n_answers,
                                                "p_value": v.p_value, "reason": v.reason}, "removed")]
        if s["step"] == "perturbation":
            steps.append({"step": "repair", "status": s["status"], "model": writer, "call_id": s["call_id"],
                          "attempt": 1, "payload": {
                              "benchmark": benchmark, "round": round_, "feedback": payload.get("feedback"),
                              "before": payload.get("seeds"), "after": payload.get("distractors"),
                              "raw": payload.get("raw"), **({"error": payload["error"]} if "error" in payload else {})}})
        elif s["step"] == "check":
            steps.append({"step": "repair_check", "status": s["status"], "model": None, "call_id": None,
                          "attempt": 1, "payload": {"benchmark": benchmark, "round": round_, **payload}})
        else:
            steps.append(blind_row(qid, round_, payload["options"], {k: payload[k] for k in (
                "n_correct", "n_answers", "p_value", "reason")}, s["status"]))
    return out_rows


def repair_step_items(read, spec, benchmark: str, new: Mapping[str, list[dict]],
                      questions: Mapping[str, Mapping[str, Any]], code_version: str) -> list[tuple]:
    """`replace_tables` items for `spec` (synthesis_steps): for every (video_id, task) with repair rows of
    `benchmark`, before or now, its rows with this benchmark's old repair rows dropped and `new` appended
    after each question's last step. `read(sql, params)` reads rows (inside the writing transaction);
    `questions`: question_id -> a row with video_id, task, abbrev."""
    import datetime as dt

    from hvbench_assets.core.synthesis.steps import REPAIR_STEPS
    from hvbench_assets.core.warehouse.store import decode_json

    steps_in = ", ".join("?" * len(REPAIR_STEPS))
    keys = {(r["video_id"], r["task"]) for r in read(
        f'SELECT DISTINCT video_id, task FROM "{spec.name}" WHERE step IN ({steps_in}) '
        "AND json_extract_string(payload, '$.benchmark') = ?", [*REPAIR_STEPS, benchmark])}
    keys |= {(questions[q]["video_id"], questions[q]["task"]) for q in new}
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    items = []
    for vid, task in sorted(keys):
        rows = decode_json(spec, read(f'SELECT * FROM "{spec.name}" WHERE video_id = ? AND task = ? '
                                      "ORDER BY question_id, seq", [vid, task]))
        kept = [r for r in rows if not (r["step"] in REPAIR_STEPS and (r["payload"] or {}).get("benchmark") == benchmark)]
        for qid, steps in new.items():
            q = questions[qid]
            if (q["video_id"], q["task"]) != (vid, task):
                continue
            seq = max((r["seq"] for r in kept if r["question_id"] == qid), default=-1) + 1
            kept += [{"weight": None, "cached": None, **s, "video_id": vid, "task": task, "abbrev": q.get("abbrev"),
                      "question_id": qid, "seq": seq + i, "code_version": code_version, "materialized_at": now}
                     for i, s in enumerate(steps)]
        items.append((spec, {"video_id": vid, "task": task}, kept, None))
    return items
