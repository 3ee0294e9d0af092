"""Human answers flow back: a new annotation rebuilds the questions that wait for it."""

import json

import dagster as dg

from hvbench_assets.core.tasks.catalog import TASKS
from hvbench_assets.core.tasks.store import ANNOTATIONS
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import WarehouseResource

ANNOTATED = {kind: [f.asset for f in TASKS if f.annotation and f.annotation.kind == kind] for kind in ("count", "action")}

annotated_tasks_job = dg.define_asset_job(
    "annotated_tasks_job",
    selection=dg.AssetSelection.assets(*[a for assets in ANNOTATED.values() for a in assets]),
    partitions_def=videos_partitions,
    description="Rebuild the questions whose truth is a human annotation (HC, AST, TSA) for one clip",
)


@dg.sensor(
    job=annotated_tasks_job,
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Rebuilds HC / AST / TSA questions of a clip when a new annotation for it is recorded",
)
def annotation_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    seen = set(json.loads(context.cursor)) if context.cursor else set()
    wh = warehouse.get()
    if not wh.has_table(ANNOTATIONS.name):
        return dg.SkipReason("no annotations yet")
    rows = wh.query("SELECT annotation_id, video_id, kind FROM annotations ORDER BY created_at")
    new = [r for r in rows if r["annotation_id"] not in seen]
    if not new:
        return dg.SkipReason("no new annotations")
    runs = {}
    for r in new:  # one run per clip and kind, keyed by the newest annotation
        runs[(r["video_id"], r["kind"])] = r["annotation_id"]
    known = set(context.instance.get_dynamic_partitions(videos_partitions.name))
    requests = [dg.RunRequest(partition_key=vid, run_key=f"annotation:{ann}",
                              asset_selection=[dg.AssetKey(a) for a in ANNOTATED[kind]],
                              tags={"hvbench/annotation": ann})
                for (vid, kind), ann in runs.items() if vid in known]
    for (vid, _), ann in runs.items():
        if vid not in known:
            context.log.warning(f"annotation {ann} names clip {vid!r}, which is not a videos partition here")
    return dg.SensorResult(run_requests=requests, cursor=json.dumps(sorted(seen | {r["annotation_id"] for r in rows})))
