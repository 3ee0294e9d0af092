"""Entry point: every Dagster object lives under defs/ and is discovered from there."""

import dagster as dg

import hvbench_assets.defs


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_defs(defs_root=hvbench_assets.defs)
