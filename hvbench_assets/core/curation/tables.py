"""Warehouse tables of curation: human review decisions (append-only) and the reviewed state of every
current question. `questions` itself is never rewritten by curation."""

from __future__ import annotations

from hvbench_assets.core.warehouse import TableSpec

REVIEW_DECISIONS = TableSpec(
    "review_decisions",
    (
        ("decision_id", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("abbrev", "VARCHAR"),
        ("content_hash", "VARCHAR"),  # the question version the reviewer saw (store.question_content_hash)
        ("reviewer", "VARCHAR"),
        ("blind_choice", "VARCHAR"),  # letter picked before the proposed answer was shown; null if skipped
        ("shown_order", "JSON"),  # letters in the order the options were displayed blind
        ("action", "VARCHAR"),  # accept | correct | reject | adjudicate
        ("corrected_answer", "VARCHAR"),  # letter (correct / adjudicate)
        ("corrected_text", "VARCHAR"),  # a written answer replacing the proposed answer's text
        ("reason", "VARCHAR"),  # reject: bad_track | frozen_video | ambiguous | wrong_label | other
        ("reason_text", "VARCHAR"),
        ("created_at", "TIMESTAMP"),
        ("seconds_spent", "DOUBLE"),
        ("watched_s", "DOUBLE"),  # seconds of the video the browser played before the decision (null: not sent)
    ),
    key=("decision_id",),
    provenance=False,
    description="Every human review decision, append-only; it applies to the question version it names",
)

REVIEWED_QUESTIONS = TableSpec(
    "reviewed_questions",
    (
        ("question_id", "VARCHAR"),
        ("video_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("abbrev", "VARCHAR"),
        ("content_hash", "VARCHAR"),
        ("state", "VARCHAR"),  # accepted | corrected | rejected | unreviewed | disputed | not_reviewed
        ("answer", "VARCHAR"),  # letter after corrections
        ("answer_text", "VARCHAR"),
        ("options", "JSON"),  # after corrections
        ("reviewers", "JSON"),
        ("decision_ids", "JSON"),  # decisions on the current version that made the state
        ("reason", "VARCHAR"),  # why rejected / disputed / waiting
    ),
    key=("question_id",),
    description="One row per current question: its review state and the answer after human corrections",
)

REVIEW_ASSIGNMENTS = TableSpec(
    "review_assignments",
    (
        ("question_id", "VARCHAR"),
        ("reviewer", "VARCHAR"),
        ("role", "VARCHAR"),  # review | adjudicate
        ("assigned_at", "TIMESTAMP"),
    ),
    key=("question_id", "reviewer"),
    provenance=False,
    description="Which reviewers must review a question (two for agreement) and who adjudicates a dispute",
)

REVIEWER_TOKENS = TableSpec(
    "reviewer_tokens",
    (
        ("reviewer", "VARCHAR"),
        ("token_sha256", "VARCHAR"),  # the token itself is shown once and never stored
        ("created_at", "TIMESTAMP"),
        ("revoked", "BOOLEAN"),
    ),
    key=("reviewer",),
    provenance=False,
    description="Per-reviewer access tokens (hashed) for a review server bound to a non-local address",
)

REVIEW_LEASES = TableSpec(
    "review_leases",
    (
        ("reviewer", "VARCHAR"),
        ("queue", "VARCHAR"),  # review | adjudicate | annotate | grade
        ("question_id", "VARCHAR"),  # the item held: a question, or a reply id in the grade queue
        ("expires_at", "TIMESTAMP"),
    ),
    key=("reviewer", "queue"),  # one open item per reviewer and queue: taking the next one drops the last
    provenance=False,
    description="Which reviewer holds an unassigned item for now, so two people are not served the same one",
)

UNDONE_DECISIONS = TableSpec(
    "undone_decisions",
    REVIEW_DECISIONS.columns + (("undone_at", "TIMESTAMP"),),
    key=("decision_id",),
    provenance=False,
    description="Review decisions their reviewer took back (undo), moved out of review_decisions and kept here",
)

REVIEW_FLAGS = TableSpec(
    "review_flags",
    (
        ("benchmark", "VARCHAR"),  # the evaluated benchmark whose report raised the flag
        ("question_id", "VARCHAR"),
        ("task", "VARCHAR"),
        ("content_hash", "VARCHAR"),  # the question version flagged; a regenerated question leaves the flag behind
        ("reasons", "JSON"),  # core/curation/flags.py FOR_REVIEW names
        ("detail", "VARCHAR"),  # the figures behind the reasons, in words
        ("answers", "JSON"),  # [{model, text, right}]: each model's pick as option text
        ("flagged_at", "TIMESTAMP"),  # first raised on this version (a decision after it closes the flag)
        ("current", "BOOLEAN"),  # the benchmark's latest report still flags it (false: kept as history)
        ("written_at", "TIMESTAMP"),  # the report that wrote the benchmark's rows last
    ),
    key=("benchmark",),
    provenance=False,
    description="Items an evaluation report sends back to the review queue, with the reason and the models' answers",
)

HUMAN_GRADES = TableSpec(
    "human_grades",
    (
        ("grade_id", "VARCHAR"),
        ("reply_id", "VARCHAR"),  # core/curation/grading.py reply_id(run_id, task, question_id)
        ("reply_sha", "VARCHAR"),  # of the reply text graded: a reply asked again is graded again
        ("run_id", "VARCHAR"),
        ("benchmark", "VARCHAR"),
        ("task", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("grader", "VARCHAR"),
        ("verdict", "VARCHAR"),  # right | wrong | ungradable (the judge rubric's verdicts; ungradable: cannot tell)
        ("created_at", "TIMESTAMP"),
        ("seconds_spent", "DOUBLE"),
    ),
    key=("grade_id",),
    provenance=False,
    description="Human grades of open-ended replies (the grade queue), append-only: each grader's latest counts",
)

CURATION_TABLES = (REVIEW_DECISIONS, REVIEWED_QUESTIONS, REVIEW_ASSIGNMENTS, REVIEWER_TOKENS, REVIEW_LEASES,
                   UNDONE_DECISIONS, REVIEW_FLAGS, HUMAN_GRADES)
