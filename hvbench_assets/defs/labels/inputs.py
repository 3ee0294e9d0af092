"""What a label asset reads from the labels before it."""

import dagster as dg

from hvbench_assets.core.warehouse import TableSpec, Warehouse


def required_rows(wh: Warehouse, spec: TableSpec, video_id: str, **query) -> list[dict]:
    """The clip's rows of an upstream label table; none -> a failure that says which asset to materialize."""
    rows = wh.rows(spec, video_id=video_id, **query)
    if not rows:
        raise dg.Failure(description=f"clip {video_id!r} has no {spec.name} rows: materialize {spec.name} first")
    return rows
