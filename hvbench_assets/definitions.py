"""Entry point: every Dagster object lives under defs/ and is discovered from there."""

import dagster as dg

import hvbench_assets.defs
from hvbench_assets import settings_table
from hvbench_assets.core.environment import package_versions
from hvbench_assets.defs import run_workers

# in a code server: each run's worker forked from a preloaded process (defs/run_workers.py)
run_workers.install(settings_table.value("HVBENCH_RUN_WORKERS"))


@dg.definitions
def defs() -> dg.Definitions:
    # the code location shows the package versions this node runs (constraints.txt pins them)
    versions = dg.Definitions(metadata={"hvbench/versions": dg.MetadataValue.json(package_versions())})
    return dg.Definitions.merge(dg.load_defs(defs_root=hvbench_assets.defs), versions)
