"""Entry point: every Dagster object lives under defs/ and is discovered from there."""

import dagster as dg

import hvbench_assets.defs
from hvbench_assets.core.environment import package_versions


@dg.definitions
def defs() -> dg.Definitions:
    # the code location shows the package versions this node runs (constraints.txt pins them)
    versions = dg.Definitions(metadata={"hvbench/versions": dg.MetadataValue.json(package_versions())})
    return dg.Definitions.merge(dg.load_defs(defs_root=hvbench_assets.defs), versions)
