"""AST (action at a specified time) and TSA (time of a specific action): truth from a human's
action-time annotation of the red-boxed target; clips and targets as BTA (> 7 s, most-present person).

It imports up a floor, from core/synthesis: the action-list reply form, parsed_call and StepLog, so its one
model question is parsed, retried and logged like every synthesis step."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hvbench_assets.core.synthesis.forms import actions
from hvbench_assets.core.synthesis.replies import Stop, parsed_call
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import ACTION_DISTRACTORS, ACTION_FROM_LIST
from hvbench_assets.core.synthesis.replies import BadReply, json_object, normalise, string_list
from hvbench_assets.core.tasks.rules import Option, Verdict, check_range, most_present, persons, reject

ONGOING = "This is an ongoing action in the video."
# The form of every AST action option, the annotated truth and the model's distractors alike (the distractor
# prompt asks for it), so the right option cannot be told apart by its wording.
ACTION_PREFIX = "begins to"
ACTION_WORDS = (3, 10)  # "begins to wave" .. a short phrase
ACTION_MAX_CHARS = 80


def action_form(text: object, prefixed: bool = True) -> tuple[str, str | None]:
    """(the text in the options' form: one line, no final period, lower-case start; None) or (text, why not)."""
    if not isinstance(text, str) or not text.strip():
        return "", "the action text is missing"
    if any(c in text for c in "\r\n\t"):
        return text, "the action text must be one line"
    clean = " ".join(text.split()).rstrip(".").strip()
    clean = clean[:1].lower() + clean[1:]
    words = clean.split()
    lo, hi = ACTION_WORDS if prefixed else (1, ACTION_WORDS[1])
    if prefixed and not clean.startswith(ACTION_PREFIX + " "):
        return clean, (f"write it like the distractors: a short action beginning with {ACTION_PREFIX!r} "
                       f"(e.g. 'begins to wave'), got {clean!r}")
    if not lo <= len(words) <= hi or len(clean) > ACTION_MAX_CHARS:
        return clean, (f"write a short action like the distractors ({lo}-{hi} words, at most {ACTION_MAX_CHARS} "
                       f"characters), got {len(words)} words")
    return clean, None
ONGOING_TIMES = (1, 4, 7, 10)


@dataclass(frozen=True)
class ActionParams:
    min_duration_s: float = 7.0  # strictly longer
    min_gap_s: int = 3  # TSA distractors at least this far from the true second


def select_target(labels: ClipLabels, p: ActionParams, rule: str) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    target = most_present(persons(labels))
    if target is None:
        return reject("people", "people=0: no face track (L1)", m)
    return Verdict(True, rule, "the most-present person of a clip longer than 7 s", m, target=list(target.track_ids),
                   target_track_ids=target.track_ids)


def select_ast(labels: ClipLabels, p: ActionParams) -> Verdict:
    return select_target(labels, p, "ast")


def select_tsa(labels: ClipLabels, p: ActionParams) -> Verdict:
    return select_target(labels, p, "tsa")


def _annotation(ctx: BuildContext) -> Pending | dict:
    ann = ctx.annotation
    if ann is None:
        tid = ctx.verdict.target_track_ids[0]
        return Pending("awaiting_annotation", "needs the target's action and its start second: hvbench annotate action "
                       f"{ctx.labels.video_id} --track {tid} --action 'begins to ...' --start S (or --ongoing / --none)")
    return ann


def time_distractors(truth_s: int, duration_s: float, min_gap: int, rng) -> list[int]:
    pool = [s for s in range(0, int(duration_s) + 1) if abs(s - truth_s) >= min_gap]
    if len(pool) < 3:
        raise ValueError(f"only {len(pool)} whole seconds lie >= {min_gap}s from {truth_s}s in a {duration_s:.1f}s clip")
    return rng.sample(pool, 3)


def build_tsa(ctx: BuildContext) -> Draft | Pending:
    ann = _annotation(ctx)
    if isinstance(ann, Pending):
        return ann
    value, ids = ann["value"], [ann["annotation_id"]]
    red = {"kind": "red_box", "track_ids": list(ctx.verdict.target_track_ids)}
    if value.get("none"):
        return Pending("rejected", "the annotator saw no distinct action of the target", annotation_ids=ids, rule="action")
    if value.get("ongoing"):
        return Draft(
            question=f"When does the person in the red box start {value.get('action') or 'the action they are doing'}?",
            truth=Option(ONGOING, "truth"), distractors=[Option(f"At {s} s", "fixed") for s in ONGOING_TIMES],
            marking=red, annotation_ids=ids, details={"ongoing": True},
        )
    start = int(value["start_s"])
    try:
        others = time_distractors(start, ctx.labels.clip.duration_s, ctx.params.min_gap_s, ctx.rng)
    except ValueError as exc:
        return Pending("rejected", str(exc), annotation_ids=ids, rule="time_distractors")
    action = value["action"].strip().rstrip(".")
    return Draft(
        question=f"At which second does the person in the red box do this: \"{action}\"?",
        truth=Option(f"At {start} s", "truth"),
        distractors=[Option(f"At {s} s", "rule") for s in others] + [Option(ONGOING, "fixed")],
        marking=red, annotation_ids=ids, details={"action": action, "start_s": start, "distractor_s": others},
    )


def bta_action_list(steps: list[dict]) -> tuple[str, ...]:
    """The action list of a clip's BTA synthesis (its ok caption's action sequence, split into actions); ()
    when BTA has not run, was rejected before its caption, or found no change of action."""
    for s in reversed(steps):
        payload = s.get("payload") or {}
        if isinstance(payload, str):
            payload = json.loads(payload)
        parsed = payload.get("parsed") if s.get("step") == "caption" and s.get("status") == "ok" else None
        if isinstance(parsed, dict) and parsed.get("action_sequence"):
            return tuple(a.rstrip(".") for a in actions(parsed["action_sequence"]))
    return ()


def action_problems(truth: str, actions: list[str]) -> tuple[list[str], list[str]]:
    """(kept, problems): distractor actions in the options' form (`action_form`, the rule annotations follow too)
    that differ from the truth and from each other, so no option stands out by its wording."""
    kept, problems, seen = [], [], {normalise(truth)}
    for a in actions:
        text, problem = action_form(a)
        if problem is not None:
            problems.append(f"{a!r}: {problem}")
        elif normalise(text) in seen:
            problems.append(f"repeats the truth or another action: {text!r}")
        else:
            kept.append(text)
            seen.add(normalise(text))
    return kept, problems


def build_ast(ctx: BuildContext) -> Draft | Pending:
    ann = _annotation(ctx)
    if isinstance(ann, Pending):
        return ann
    value, ids = ann["value"], [ann["annotation_id"]]
    if value.get("none") or value.get("ongoing"):
        return Pending("rejected", "no short-term action annotated (AST needs an action with a start second)",
                       annotation_ids=ids, rule="short_action")
    action, start = value["action"].strip().rstrip("."), int(value["start_s"])
    tids = ctx.verdict.target_track_ids
    listed = tuple(ctx.bta_actions or ())
    if listed:  # the paper's method: pick and edit actions of the clip's BTA list
        source = "bta_action_list"
        ask = (lambda fb: ctx.ask(ACTION_FROM_LIST, action=action, actions="; ".join(listed), feedback=fb))
    else:
        source = "prompt"
        context = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
        ask = (lambda fb: ctx.ask(ACTION_DISTRACTORS, action=action, context=context or "nothing more", feedback=fb))

    def parse(text):
        kept, problems = action_problems(action, string_list(json_object(text), "actions", 3))
        if len(kept) < 3:
            raise BadReply("distractor actions failed the checks: " + "; ".join(problems))
        return kept

    log = StepLog()
    try:
        r, kept, attempt = parsed_call(log, "perturbation", ask, parse, "distractor reply")
    except Stop as stop:
        return Pending(stop.status, stop.reason, call_ids=log.call_ids, annotation_ids=ids, rule="distractors")
    log.add("perturbation", {"raw": r.text, "distractors": kept}, call=r, attempt=attempt)
    return Draft(
        question=f"What does the person in the red box begin to do at second {start}?",
        truth=Option(action, "truth"), distractors=[Option(a, "model") for a in kept[:3]],
        marking={"kind": "red_box", "track_ids": list(tids)}, call_ids=log.call_ids, annotation_ids=ids,
        details={"start_s": start, "distractor_source": source, "bta_actions": list(listed), "attempt": attempt},
    )
