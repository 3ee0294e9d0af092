"""Snapshot of every asset spec (key, group, deps, partitions, backfill policy, kinds, pool, code version) and check
(with its partitions),
so an accidental change to the graph shows up in review. After an intended change:
    UPDATE_SNAPSHOTS=1 .venv/bin/pytest hvbench_assets_tests/test_asset_graph.py"""

import json
import os
from pathlib import Path

import dagster as dg

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.json"


def _partitions_name(pd) -> str | None:
    if pd is None:
        return None
    if isinstance(pd, dg.MultiPartitionsDefinition):
        return " x ".join(_partitions_name(d.partitions_def) or "?" for d in pd.partitions_defs)
    return getattr(pd, "name", None) or type(pd).__name__


def _backfill(policy) -> str | None:
    if policy is None:
        return None
    return f"{policy.policy_type.value.lower()}({policy.max_partitions_per_run or ''})"


def graph_snapshot() -> dict:
    from hvbench_assets.definitions import defs

    d = defs()
    repo = d.get_repository_def()
    graph = repo.asset_graph
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(p.to_user_string() for p in node.parent_keys),
            "partitions": _partitions_name(node.partitions_def),
            "backfill": _backfill(node.backfill_policy),
            "kinds": sorted(node.kinds),
            "pools": sorted(node.pools or []),
            "code_version": node.code_version,
            "description": bool(node.description),
        }
    # a check per partition shows up as "<asset>:<check> [<partitions>]" (the UI counts and lists its partitions)
    checks = sorted(f"{k.asset_key.to_user_string()}:{k.name}" + (f" [{p}]" if (p := _partitions_name(
        graph.get(k).partitions_def)) else "") for k in graph.asset_check_keys)
    return {
        "assets": assets,
        "checks": checks,
        "sensors": sorted(s.name for s in d.sensors or []),
        "jobs": sorted(j.name for j in repo.get_all_jobs() if not j.name.startswith("__")),
        "resources": sorted(d.resources or {}),
    }


def test_asset_graph_matches_snapshot():
    current = graph_snapshot()
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert current == json.loads(SNAPSHOT.read_text()), (
        "the asset graph changed; if intended, run UPDATE_SNAPSHOTS=1 pytest hvbench_assets_tests/test_asset_graph.py"
    )


def test_every_asset_follows_the_house_rules():
    for key, spec in graph_snapshot()["assets"].items():
        assert spec["description"], f"{key}: one-line description missing"
        assert spec["group"] in {"ingest", "labels", "tasks", "synthesis", "curation", "benchmark", "evaluation"}, key
        assert spec["code_version"], f"{key}: code_version missing"
        assert spec["kinds"], f"{key}: kinds missing"
