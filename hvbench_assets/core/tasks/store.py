"""Warehouse tables of the task layer: one selection verdict per (clip, task), the questions, and the
human annotations some tasks need as ground truth.

Statuses of a question: `draft` (built automatically, not reviewed), `awaiting_annotation` (the truth is
human: a count or an action-time pair), `awaiting_review`; curation later sets `accepted` / `rejected`.
A candidate is `selected` (a question or an annotation request exists), `rejected` (a rule failed: `rule`
and `reason` say which and the measured value), `blocked` (a model or setting is missing), `failed` (a
model answered garbage) or `awaiting_annotation`.
"""

from __future__ import annotations

import hashlib
import json
import random

from hvbench_assets.core.warehouse import TableSpec

TASK_CANDIDATES = TableSpec(
    "task_candidates",
    (
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),  # published file stem, e.g. Active_Speaker_Detection
        ("abbrev", "VARCHAR"),  # ASD
        ("status", "VARCHAR"),
        ("rule", "VARCHAR"),  # the rule that decided (for rejections: the one that failed)
        ("reason", "VARCHAR"),  # e.g. "people=5 not in 2..4"
        ("measured", "JSON"),  # every value the rules looked at
        ("target_track_ids", "JSON"),
        ("question_id", "VARCHAR"),
    ),
    key=("video_id", "task"),
    description="One verdict per clip and task: selected, or rejected with the failing rule and value",
)

QUESTIONS = TableSpec(
    "questions",
    (
        ("question_id", "VARCHAR"),
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("abbrev", "VARCHAR"),
        ("status", "VARCHAR"),  # draft | awaiting_annotation | awaiting_review | accepted | rejected
        ("provisional", "BOOLEAN"),  # the truth is one model's answer until the ensemble runs
        ("target_track_ids", "JSON"),
        ("question", "VARCHAR"),
        ("options", "JSON"),  # [{"letter", "text", "origin"}]; origin: truth | rule | model | fixed
        ("answer", "VARCHAR"),  # letter
        ("answer_text", "VARCHAR"),
        ("video_path", "VARCHAR"),  # the question video (marked, reversed or the clip itself)
        ("marking", "JSON"),  # {"kind": red_box | numbers | none | reversed_audio, ...}
        ("rule", "VARCHAR"),
        ("rule_version", "VARCHAR"),
        ("rule_params", "JSON"),
        ("label_rows", "JSON"),  # [{"table", "video_id", "track_id", "code_version", "materialized_at", ...}]
        ("call_ids", "JSON"),  # model_calls ids the question was built from
        ("annotation_ids", "JSON"),
        ("seed", "BIGINT"),
        ("clip_sha256", "VARCHAR"),
    ),
    key=("video_id", "task"),
    description="Benchmark questions with options, answer, question video and provenance",
)

ANNOTATIONS = TableSpec(
    "annotations",
    (
        ("annotation_id", "VARCHAR"),
        ("video_id", "VARCHAR"),
        ("kind", "VARCHAR"),  # count | action
        ("track_id", "INTEGER"),  # the red-boxed target of an action annotation; null for a count
        ("value", "JSON"),  # count: {"count": n}; action: {"action": str, "start_s": int} | {"ongoing": true} | {"none": true}
        ("annotator", "VARCHAR"),
        ("created_at", "TIMESTAMP"),
    ),
    key=("annotation_id",),
    provenance=False,
    description="Human ground truth for HC (counts) and AST/TSA (action-time pairs); append-only, latest wins",
)

TASK_TABLES = (TASK_CANDIDATES, QUESTIONS)


def question_id(task: str, clip_sha256: str, target: object, rule_version: str) -> str:
    """Stable id: the same task, clip content, target and rule version give the same id."""
    blob = json.dumps([task, clip_sha256, target, rule_version], sort_keys=True, default=str)
    return "q" + hashlib.sha256(blob.encode()).hexdigest()[:15]


def seed_of(qid: str) -> int:
    return int(hashlib.sha256(qid.encode()).hexdigest()[:15], 16)


def rng_for(qid: str) -> random.Random:
    """Every random choice of a question comes from this generator, so a rerun is identical."""
    return random.Random(seed_of(qid))


CONTENT_FIELDS = ("question", "options", "answer", "answer_text", "marking", "clip_sha256")


def question_content_hash(row: dict) -> str:
    """What a reviewer saw: the same id regenerated with other text, options, answer or clip hashes
    differently, so a decision made on the old version no longer applies (curation, export)."""
    blob = {}
    for name in CONTENT_FIELDS:
        value = row.get(name)
        blob[name] = json.loads(value) if isinstance(value, str) and name in ("options", "marking") else value
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]
