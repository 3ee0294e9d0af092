"""AST, Action at Specified Time: what the red-boxed person begins to do at a given second. The truth is a human's
action-time annotation (`hvbench annotate action`); a model writes three distractor actions in the truth's form
("begins to ..."), picked and edited from the clip's BTA action list when BTA ran, else from the L4 appearance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.mllm.prompts import Prompt
from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.synthesis.replies import BadReply, Stop, json_object, normalise, parsed_call, string_list
from hvbench_assets.core.synthesis.steps import StepLog
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.actions import ActionParams, action_form, annotation_of, select_target
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending, stopped
from hvbench_assets.core.tasks.families import behavior_temporal_analysis
from hvbench_assets.core.tasks.family import BEHAVIOR, Annotation, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.prompts import SYSTEM
from hvbench_assets.core.tasks.rules import Option, Verdict

DISTRACTORS = Prompt(
    name="task_action_distractors",
    system=SYSTEM,
    user=("A person in a video performs this short action: \"{action}\". What is known about the person and "
          "the clip: {context}. Write three short actions that this person could plausibly do in such a "
          "clip but that are clearly different from the given action. Word each like the given action (if it "
          "begins with \"begins to\", so does each of yours). "
          "Reply with JSON only: {{\"actions\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 200},
)
# the paper's way: the distractors come from the actions BTA's synthesis found in the same clip
FROM_LIST = Prompt(
    name="task_action_distractors_from_list",
    system=SYSTEM,
    user=("A person in a video performs this short action: \"{action}\". Over the whole clip this person does "
          "these actions, in order: {actions}. Choose three actions from this list that are clearly different from "
          "the given action, and edit each slightly so it stays clearly different. If the list holds fewer than "
          "three such actions, make up the missing ones so that they fit the clip. Word each like the given "
          "action (if it begins with \"begins to\", so does each of yours). "
          "Reply with JSON only: {{\"actions\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 200},
)


def select_ast(labels: ClipLabels, p: ActionParams) -> Verdict:
    return select_target(labels, p, "ast")


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
    ann = annotation_of(ctx)
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
        ask = (lambda fb: ctx.ask(FROM_LIST, action=action, actions="; ".join(listed), feedback=fb))
    else:
        source = "prompt"
        context = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
        ask = (lambda fb: ctx.ask(DISTRACTORS, action=action, context=context or "nothing more", feedback=fb))

    def parse(text):
        kept, problems = action_problems(action, string_list(json_object(text), "actions", 3))
        if len(kept) < 3:
            raise BadReply("distractor actions failed the checks: " + "; ".join(problems))
        return kept

    log = StepLog()
    try:
        r, kept, attempt = parsed_call(log, "perturbation", ask, parse, "distractor reply")
    except Stop as stop:
        return stopped(stop, log, rule="distractors", annotation_ids=ids)
    log.add("perturbation", {"raw": r.text, "distractors": kept}, call=r, attempt=attempt)
    return Draft(
        question=f"What does the person in the red box begin to do at second {start}?",
        truth=Option(action, "truth"), distractors=[Option(a, "model") for a in kept[:3]],
        marking={"kind": "red_box", "track_ids": list(tids)}, call_ids=log.call_ids, annotation_ids=ids,
        details={"start_s": start, "distractor_source": source, "bta_actions": list(listed), "attempt": attempt},
    )


def agreement(value: Mapping[str, Any]) -> tuple:
    """Two annotators agree on the same action text (case and spacing aside) starting at the same second."""
    text = " ".join(str(value.get("action") or "").lower().split()).rstrip(".")
    return ("action", text, value.get("start_s"))


FAMILY = TaskFamily(
    name="Action_at_Specified_Time", abbrev="AST", category=BEHAVIOR, asset="action_at_specified_time",
    labels=("human_tracks",), ours=("person_count", "appearance"),
    why_ours="L4 gives the model context for distractor actions (BTA's action list once synthesis exists)",
    marking="red_box", after=(behavior_temporal_analysis.FAMILY,),
    select=select_ast, build=build_ast, params=ActionParams(),
    version="2",  # 2: distractors must have the truth's form (actions.action_form)
    model_prompts=(DISTRACTORS, FROM_LIST),
    asks=Asks("the action at a given second", (asks.ACTION,)),
    options_check=lambda truth, distractors, numbers=(): action_problems(truth, distractors)[1],
    truth="human action; model distractors", answer_from="a human action-time pair (annotations)",
    annotation=Annotation("action", agreement),
    evidence=Evidence("action_time", "answer"),
    guideline="Go to the second named: the right option is what the boxed person begins to do then. Annotate "
              "a short, distinct action ('begins to ...') and press t where it starts, not where it is "
              "clearest.",
)
