"""Every column of every warehouse table has a description (shown in the UI's column schema)."""

from __future__ import annotations

import importlib
import pkgutil

import hvbench_assets.core
from hvbench_assets.core.warehouse import TableSpec
from hvbench_assets.core.warehouse.columns import BY_TABLE, describe
from hvbench_assets.defs.metadata import table_schema


def all_specs() -> dict[str, TableSpec]:
    """The TableSpecs defined at module level anywhere under hvbench_assets.core."""
    specs: dict[str, TableSpec] = {}
    for info in pkgutil.walk_packages(hvbench_assets.core.__path__, "hvbench_assets.core."):
        module = importlib.import_module(info.name)
        specs.update({v.name: v for v in vars(module).values() if isinstance(v, TableSpec)})
    return specs


def test_every_column_of_every_table_has_a_description():
    specs = all_specs()
    assert {"human_tracks", "speaker_scores", "questions", "eval_responses", "export_items"} <= set(specs)
    missing = {name: [c for c, _ in spec.all_columns if not describe(spec, c)] for name, spec in specs.items()}
    assert not {k: v for k, v in missing.items() if v}
    # no description for a table or column that does not exist (a rename would leave it behind)
    stale = {t: [c for c in cols if c not in specs[t].column_names] if t in specs else ["<table>"]
             for t, cols in BY_TABLE.items() if cols}
    assert not {k: v for k, v in stale.items() if v}


def test_column_schema_carries_the_descriptions():
    spec = all_specs()["speaker_scores"]
    columns = {c.name: c.description for c in table_schema(spec).columns}
    assert columns["scores"] == "One score per track frame (> 0: speaking)"
    assert columns["track_id"].startswith("L1 track id")
    assert all(columns.values())


def test_every_asset_shows_its_table_columns_with_descriptions():
    from hvbench_assets.definitions import defs

    specs = list(defs().resolve_all_asset_specs())
    assert len(specs) > 30
    without = [s.key.to_user_string() for s in specs if "dagster/column_schema" not in s.metadata]
    assert not without, f"assets without a column schema: {without}"
    undescribed = [(s.key.to_user_string(), c.name) for s in specs
                   for c in s.metadata["dagster/column_schema"].columns if not c.description]
    assert not undescribed
