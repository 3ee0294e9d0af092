"""Kept so that a DAGSTER_HOME written before the runtime moved (its dagster.yaml names
`hvbench_assets.defs.instance`) still starts: the instance class lives in hvbench_assets/runtime/instance.py."""

from hvbench_assets.runtime.instance import HvbenchInstance, PooledSqliteEventLogStorage, PooledSqliteStorage  # noqa: F401
