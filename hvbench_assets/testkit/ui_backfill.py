"""A backfill launched as the UI launches one: Dagster's GraphQL mutation `launchPartitionBackfill`, whose runs the
daemon's backfill loop then makes (used by tests, the cluster scenario and benchmarks/short_clip_backfill.py)."""

from __future__ import annotations

from collections.abc import Sequence

BACKFILL = """
mutation($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on PythonError { message stack }
    ... on PartitionSetNotFoundError { message }
    ... on PartitionKeysNotFoundError { message }
    ... on LaunchBackfillSuccess { backfillId }
  }
}"""


def launch_backfill(request_context, partitions: Sequence[str], assets: Sequence[str] = (), job: str | None = None,
                    location: str = "hvbench") -> str:
    """The backfill's id. Without `job`: an asset backfill of `assets` (the asset graph's "Materialize" over selected
    partitions); with it: the job page's "Launch backfill" (of `assets` only, when given)."""
    from dagster_graphql.test.utils import execute_dagster_graphql

    params: dict = {"partitionNames": list(partitions)}
    if job:
        params["selector"] = {"repositorySelector": {"repositoryLocationName": location,
                                                     "repositoryName": "__repository__"},
                              "partitionSetName": f"{job}_partition_set"}
    if assets:
        params["assetSelection"] = [{"path": [a]} for a in assets]
    got = execute_dagster_graphql(request_context, BACKFILL, {"backfillParams": params})
    result = got.data["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise RuntimeError(f"backfill not launched: {result}")
    return result["backfillId"]
