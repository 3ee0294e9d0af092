"""`hvbench review` (the web app) and its helpers: reviewer tokens, two-reviewer assignment, agreement."""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

from hvbench_assets.cli.common import command, default_warehouse, warehouse_arg
from hvbench_assets import settings_table



def annotation_limits():
    """HVBENCH_MAX_HEAD_COUNT (default 200): the largest head count an annotator may enter."""
    from hvbench_assets.core.tasks.annotations import AnnotationLimits

    raw = settings_table.raw("HVBENCH_MAX_HEAD_COUNT")
    if not raw:
        return AnnotationLimits()
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"HVBENCH_MAX_HEAD_COUNT must be a whole number >= 1, got {raw!r}")
    return AnnotationLimits(max_count=int(raw))


def _positive(name: str, whole: bool = False) -> float:
    """A positive number from the setting `name` (unset or empty: its default)."""
    raw = settings_table.raw(name)
    if not raw:
        return settings_table.default(name)
    try:
        x = int(raw) if whole else float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a {'whole ' if whole else ''}number > 0, got {raw!r}") from None
    if not (x > 0 and x < float("inf")):
        raise ValueError(f"{name} must be a {'whole ' if whole else ''}number > 0, got {raw!r}")
    return x


def review_config(warehouse: Path | None, require_token: bool, host: str = "127.0.0.1"):
    from hvbench_assets.core.curation.state import excluded_tasks
    from hvbench_assets.review.app import ReviewConfig

    roots = tuple(Path(p) for p in settings_table.raw("HVBENCH_ALLOWED_ROOTS").split(os.pathsep) if p.strip())
    try:
        excluded = excluded_tasks(settings_table.raw("HVBENCH_REVIEW_EXCLUDE"))
    except ValueError as exc:
        raise ValueError(f"HVBENCH_REVIEW_EXCLUDE: {exc}") from None
    return ReviewConfig(warehouse=warehouse or default_warehouse(), data_dir=settings_table.data_dir(),
                        require_token=require_token, excluded=excluded,
                        roots=roots, dagster_url=settings_table.value("HVBENCH_DAGSTER_URL"),
                        host=host, annotation_limits=annotation_limits(),
                        max_body_bytes=int(_positive("HVBENCH_REVIEW_MAX_BODY", whole=True)),
                        lease_minutes=_positive("HVBENCH_REVIEW_LEASE_MINUTES"),
                        fast_floor_s=_positive("HVBENCH_REVIEW_FAST_S"))


def _serve_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other needs tokens)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--require-token", action="store_true", help="ask for reviewer tokens on 127.0.0.1 too")


@command("review", "the review web app: annotate HC/AST/TSA, review questions blind, adjudicate, agreement", _serve_args)
def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hvbench_assets.core.curation.tables import REVIEWER_TOKENS
    from hvbench_assets.core.curation.tokens import requires_token
    from hvbench_assets.settings_table import open_warehouse
    from hvbench_assets.review.app import create_app

    try:
        cfg = review_config(args.warehouse, args.require_token or requires_token(args.host), args.host)
    except ValueError as exc:
        print(f"hvbench review: {exc}", file=sys.stderr)
        return 2
    if cfg.require_token and open_warehouse(cfg.warehouse).count(REVIEWER_TOKENS) == 0:
        print("hvbench review: bound to a non-local address, every reviewer needs a token and none exists yet: "
              "hvbench review-token NAME", file=sys.stderr)
    print(f"review app on http://{args.host}:{args.port}/  (warehouse {cfg.warehouse}; "
          f"{'tokens required' if cfg.require_token else 'local: reviewers type their name'})", flush=True)
    uvicorn.run(create_app(cfg), host=args.host, port=args.port, log_level="warning")
    return 0


def _token_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("reviewer", help="reviewer name (one word)")
    p.add_argument("--revoke", action="store_true", help="revoke the reviewer's token instead")


@command("review-token", "create (or replace) a reviewer's access token for `hvbench review --host ...`; shown once", _token_args)
def _token(args: argparse.Namespace) -> int:
    from hvbench_assets.core.curation import tokens
    from hvbench_assets.settings_table import open_warehouse

    wh = open_warehouse(args.warehouse)
    if args.revoke:
        print(f"revoked {args.reviewer}" if tokens.revoke_token(wh, args.reviewer) else f"{args.reviewer} has no token")
        return 0
    try:
        token = tokens.create_token(wh, args.reviewer)
    except ValueError as exc:
        print(f"hvbench review-token: {exc}", file=sys.stderr)
        return 2
    print(f"token for {args.reviewer} (stored hashed; shown only now):\n{token}")
    return 0


def _assign_args(p: argparse.ArgumentParser) -> None:
    warehouse_arg(p)
    p.add_argument("--reviewers", required=True, help="comma-separated names, e.g. ann,bob (each reviews every item)")
    p.add_argument("--task", default=None, help="comma-separated tasks (abbreviations); default every reviewed task")
    p.add_argument("--sample", type=int, default=None, help="assign a seeded random sample of this many questions")
    p.add_argument("--adjudicator", default=None, help="the third person who settles disagreements on these items")


@command("review-assign", "assign questions to reviewers (two for agreement) and optionally a named adjudicator", _assign_args)
def _assign(args: argparse.Namespace) -> int:
    from hvbench_assets.core.tasks.catalog import task_info
    from hvbench_assets.core.curation.state import excluded_tasks, is_question
    from hvbench_assets.core.curation.store import BadDecision, assign
    from hvbench_assets.core.tasks.store import QUESTIONS
    from hvbench_assets.settings_table import open_warehouse

    wh = open_warehouse(args.warehouse)
    excluded = excluded_tasks(settings_table.raw("HVBENCH_REVIEW_EXCLUDE"))
    wanted = None
    if args.task:
        infos = [task_info(t) for t in args.task.split(",") if t.strip()]
        if None in infos:
            print(f"hvbench review-assign: unknown task in {args.task!r}", file=sys.stderr)
            return 2
        wanted = {i.abbrev for i in infos}
    qids = sorted(q["question_id"] for q in wh.rows(QUESTIONS) if is_question(q)
                  and (q["abbrev"] in wanted if wanted else q["abbrev"] not in excluded))
    if args.sample is not None and args.sample < len(qids):
        qids = sorted(random.Random(0).sample(qids, args.sample))
    try:
        n = assign(wh, qids, args.reviewers.split(","))
        if args.adjudicator:
            n += assign(wh, qids, [args.adjudicator], role="adjudicate")
    except BadDecision as exc:
        print(f"hvbench review-assign: {exc}", file=sys.stderr)
        return 2
    print(f"{len(qids)} question(s); {n} new assignment(s)")
    return 0


@command("review-stats", "Cohen's kappa per task, reviewer accuracy on blind choices, the adjudication list", warehouse_arg)
def _stats(args: argparse.Namespace) -> int:
    from hvbench_assets.core.curation.agreement import kappa_table, reviewer_accuracy
    from hvbench_assets.core.curation.queue import adjudication_list
    from hvbench_assets.core.curation.state import curate, excluded_tasks
    from hvbench_assets.core.curation.store import load_state
    from hvbench_assets.settings_table import open_warehouse

    s = load_state(open_warehouse(args.warehouse))
    excluded = excluded_tasks(settings_table.raw("HVBENCH_REVIEW_EXCLUDE"))
    for on in ("blind", "verdict"):
        print(f"Cohen's kappa on {on} labels:")
        for r in kappa_table(s["questions"], s["decisions"], on):
            k = f"{r['kappa']:.3f}" if r["kappa"] is not None else "undefined (one label)"
            print(f"  {r['abbrev']:5s} {r['reviewer_a']}/{r['reviewer_b']}: items={r['items']} agreement={r['agreement']:.2f} kappa={k}")
    print("Reviewer accuracy on blind choices:")
    reviewed = curate(s["questions"], s["decisions"], excluded, s["assignments"], s["annotations"])
    for r in reviewer_accuracy(s["questions"], s["decisions"], reviewed):
        print(f"  {r['reviewer']} {r['abbrev']}: {r['correct']}/{r['items']} = {r['accuracy']:.2f}")
    from hvbench_assets.review.stats import clip_durations, timing_stats

    wh = open_warehouse(args.warehouse)
    stats = timing_stats(s, reviewed, clip_durations(wh), _positive("HVBENCH_REVIEW_FAST_S"))
    print(f"Seconds per decision (too fast: under min(clip, {stats['fast_floor_s']:g} s), video never played):")
    for r in stats["times"]:
        med = f"{r['median_s']:.1f}" if r["median_s"] is not None else "-"
        print(f"  {r['reviewer']} {r['abbrev']}: decisions={r['decisions']} median_s={med} too_fast={r['fast']}")
    print("Descriptive questions needing no edit (ours / paper):")
    for r in stats["no_edit"]:
        ours = f"{100 * r['share']:.1f} %" if r["share"] is not None else "-"
        print(f"  {r['abbrev']:5s} settled={r['settled']} no_edit={r['no_edit']} ours={ours} paper={100 * r['paper_share']:.1f} %")
    disputed = adjudication_list(s["questions"], s["decisions"], s["assignments"], excluded,
                                 annotations=s["annotations"])
    print(f"Adjudication list: {len(disputed)}")
    for r in disputed:
        print(f"  {r['question_id']} {r['abbrev']} {r['video_id']}: {r['reason']}")
    return 0
