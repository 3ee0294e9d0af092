"""`hvbench annotate`, `questions` and `explain`: recording a human answer, reading the generated questions,
and the whole chain of one question."""

from __future__ import annotations

import argparse
import os
import sys

from hvbench_assets.cli.common import command, existing_warehouse, warehouse_arg, warehouse_path


# -- annotate / questions ------------------------------------------------------------------------
def _annotate_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--annotator", default=os.environ.get("USER", "cli"), help="who annotates (stored with the answer)")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    count = kinds.add_parser("count", help="HC: how many different people the clip shows")
    count.add_argument("clip", help="clip key (videos partition), e.g. talk__000")
    count.add_argument("n", help="a whole number in 1..HVBENCH_MAX_HEAD_COUNT (default 200)")
    count.add_argument("--confirm", action="store_true",
                       help="store a count more than 2x off L2's person estimate (it is refused otherwise)")
    action = kinds.add_parser("action", help="AST/TSA: the red-boxed person's short action and the second it starts")
    action.add_argument("clip")
    action.add_argument("--track", type=int, required=True, help="the target's L1 track id (task_candidates names it)")
    what = action.add_mutually_exclusive_group(required=True)
    what.add_argument("--action", help="a short action like the distractors', e.g. 'begins to wave'")
    what.add_argument("--ongoing", action="store_true", help="the person keeps doing one thing the whole clip")
    what.add_argument("--none", action="store_true", help="no distinct short action")
    action.add_argument("--start", default=None, help="second the action starts (with --action), inside the clip")
    action.add_argument("--end", default=None, help="second the action ends (optional), after --start, inside the clip")


@command("annotate", "record a human answer: a person count (HC) or an action-time pair (AST/TSA)", _annotate_args)
def _annotate(args: argparse.Namespace) -> int:
    from hvbench_assets.cli.review import annotation_limits
    from hvbench_assets.core.tasks import annotations
    from hvbench_assets.settings_table import open_warehouse

    path = warehouse_path(args)
    wh = open_warehouse(path)
    try:
        limits = annotation_limits()
        if not annotations.clip_exists(wh, args.clip):
            raise annotations.BadAnnotation(f"clip {args.clip!r} is not in {path} (see `hvbench questions` or the clips table)")
        facts = annotations.clip_facts(wh, args.clip)
        if args.kind == "count":
            value, track = annotations.check_count(args.n, facts, limits, confirmed=args.confirm), None
        else:
            value = annotations.check_action(args.action, args.start, args.end, ongoing=args.ongoing, none=args.none,
                                             facts=facts)
            track = args.track
    except annotations.BadAnnotation as exc:
        hint = " (rerun with --confirm to store it anyway)" if exc.needs_confirmation else ""
        print(f"hvbench annotate: nothing stored: {exc}{hint}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a bad setting
        print(f"hvbench annotate: {exc}", file=sys.stderr)
        return 2
    ann_id = annotations.record(wh, args.clip, args.kind, value, track_id=track, annotator=args.annotator)
    tasks = "human_counting" if args.kind == "count" else "action_at_specified_time, time_of_specific_action"
    print(f"recorded {ann_id} for {args.clip}: {value}\nannotation_sensor rebuilds {tasks} for this clip "
          f"(or materialize them for partition {args.clip} in the UI)")
    return 0


def _questions_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--task", default=None, help="task name or abbreviation, e.g. ASD")
    p.add_argument("--clip", default=None, help="one clip key")
    p.add_argument("--candidates", action="store_true", help="also list every clip and task verdict (why no question)")


@command("questions", "print generated questions with options, answer and where each fact came from", _questions_args)
def _questions(args: argparse.Namespace) -> int:
    from hvbench_assets.core.tasks.describe import questions_text

    wh = existing_warehouse(args, " yet (run `hvbench demo` or the per-clip jobs)", code=0)
    print(questions_text(wh, task=args.task, clip=args.clip, candidates=args.candidates))
    return 0


# -- explain -----------------------------------------------------------------------------------
def _explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("question_id", help="a questions.question_id (see `hvbench questions`)")
    warehouse_arg(p)
    p.add_argument("--json", action="store_true", help="print the chain as JSON")


@command("explain", "the whole chain of one question: source, labels, rule, model calls, leakage, review, evaluations",
         _explain_args)
def _explain(args: argparse.Namespace) -> int:
    import json

    from hvbench_assets.core.benchmark.explain import explain_question, format_explanation

    wh = existing_warehouse(args, " (set HVBENCH_WAREHOUSE or pass --warehouse)")
    data = explain_question(wh, args.question_id)
    if not data["found"]:
        print(data["message"], file=sys.stderr)
        return 2
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else format_explanation(data))
    return 0
