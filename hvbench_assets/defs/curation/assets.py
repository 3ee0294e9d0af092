"""`reviewed_questions` (group `curation`): every current question with its review state, rebuilt from
`questions` and the append-only `review_decisions` (the review sensor materializes it after new decisions);
only rows whose state changed are written, in short batches (core/curation/reviewed.py)."""

import dagster as dg

from hvbench_assets.core.curation.state import CURATION_RULE_VERSION, STATES, excluded_tasks, state_counts
from hvbench_assets.core.curation.reviewed import update_reviewed
from hvbench_assets.core.curation.tables import REVIEW_DECISIONS, REVIEWED_QUESTIONS
from hvbench_assets.defs.metadata import table_definition
from hvbench_assets.defs.resources import SettingsResource, WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS


def _state_table(counts: dict[str, dict[str, int]]) -> str:
    lines = ["| task | " + " | ".join(STATES) + " |", "|---|" + "---|" * len(STATES)]
    lines += [f"| {abbrev} | " + " | ".join(str(per[s]) for s in STATES) + " |" for abbrev, per in sorted(counts.items())]
    return "\n".join(lines)


@dg.asset(
    name="reviewed_questions",
    deps=[a.key for a in TASK_ASSETS],
    group_name="curation",
    kinds={"python", "duckdb"},
    code_version=CURATION_RULE_VERSION,
    description="Review state of every current question (accepted, corrected, rejected, disputed, ...) from human decisions",
    metadata=table_definition(REVIEWED_QUESTIONS, REVIEW_DECISIONS),
)
def reviewed_questions(context: dg.AssetExecutionContext, settings: SettingsResource,
                       warehouse: WarehouseResource) -> dg.MaterializeResult:
    try:
        excluded = excluded_tasks(settings.review_exclude)
    except ValueError as exc:
        raise dg.Failure(description=f"HVBENCH_REVIEW_EXCLUDE: {exc}", allow_retries=False) from exc
    wh = warehouse.get()
    result = update_reviewed(wh, excluded, {"backend": "rules", "model": None, "code_version": CURATION_RULE_VERSION})
    rows = result.rows
    counts = state_counts(rows)
    totals = {s: sum(per[s] for per in counts.values()) for s in STATES}
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "decisions": wh.count(REVIEW_DECISIONS),
        "rows_written": result.written, "rows_deleted": result.deleted,  # only what changed is written
        "longest_lock_s": round(max(result.lock_s, default=0.0), 3), "restarts": result.restarts,
        "excluded_tasks": ", ".join(sorted(excluded)) or "none",
        **{f"state_{s}": n for s, n in totals.items()},
        "states_by_task": dg.MetadataValue.md(_state_table(counts) if counts else "no questions yet"),
    })
