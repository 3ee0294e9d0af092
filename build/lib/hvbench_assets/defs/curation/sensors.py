"""Human decisions flow back: new review decisions (or assignments, or regenerated questions) rebuild
`reviewed_questions`. Annotations are picked up by defs/tasks/sensors.py::annotation_sensor."""

import hashlib
import json

import dagster as dg

from hvbench_assets.core.curation.tables import REVIEW_ASSIGNMENTS, REVIEW_DECISIONS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.defs.resources import WarehouseResource

curation_job = dg.define_asset_job(
    "curation_job", selection=dg.AssetSelection.assets("reviewed_questions"),
    description="Rebuild reviewed_questions from questions and review decisions",
)

_WATCHED = ((REVIEW_DECISIONS, "created_at"), (REVIEW_ASSIGNMENTS, "assigned_at"), (QUESTIONS, "materialized_at"))


def review_fingerprint(wh) -> dict:
    """Row count and newest timestamp of each table reviewed_questions is computed from."""
    out = {}
    for spec, col in _WATCHED:
        if wh.has_table(spec.name):
            r = wh.query(f'SELECT count(*) AS n, max("{col}") AS t FROM "{spec.name}"')[0]
            out[spec.name] = [r["n"], str(r["t"])]
    return out


@dg.sensor(
    job=curation_job,
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Rebuilds reviewed_questions when a review decision or assignment is recorded or a question changes",
)
def review_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    wh = warehouse.get()
    if not wh.has_table(QUESTIONS.name):
        return dg.SkipReason("no questions yet")
    now = review_fingerprint(wh)
    key = hashlib.sha256(json.dumps(now, sort_keys=True).encode()).hexdigest()[:16]
    if key == context.cursor:
        return dg.SkipReason("no new decisions, assignments or question versions")
    waiting = context.instance.get_runs(dg.RunsFilter(job_name=curation_job.name, statuses=[
        dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING]), limit=1)
    if waiting:  # it has not read the tables yet, so it takes this change in too (no pile-up during a backfill)
        return dg.SkipReason(f"curation_job run {waiting[0].run_id} has not started yet; it includes these changes")
    decisions = now.get(REVIEW_DECISIONS.name, [0, None])[0]
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"review:{key}", tags={"hvbench/decisions": str(decisions)})],
                           cursor=key)
