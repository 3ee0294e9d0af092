"""Metadata every warehouse-writing asset shows the same way in the UI: its table's columns (definition),
row counts (materialization), rounded numbers, images and file links.

File links (`paths`) name files relative to the data folder (HVBENCH_DATA_DIR), as the warehouse stores them, and
name the data folder itself once beside them (`data_folder`): a materialization stays readable after the data
folder moves or is restored elsewhere (its relative paths resolve under the new folder), and no event names one
host's mount point in every entry. A file outside the data folder keeps its absolute path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from hvbench_assets.core.media.paths import data_root, relative_to_root
from hvbench_assets.core.render.inline import MIME, md_image
from hvbench_assets.core.warehouse import TableSpec, Warehouse
from hvbench_assets.core.warehouse.columns import describe

DIGITS = 3
MAX_INLINE_IMAGE_BYTES = 200_000  # larger images are linked by path only (event log rows stay small)


def table_schema(spec: TableSpec) -> dg.TableSchema:
    return dg.TableSchema(columns=[dg.TableColumn(name, kind, description=describe(spec, name) or None)
                                   for name, kind in spec.all_columns])


def table_definition(spec: TableSpec, *companions: TableSpec) -> dict[str, Any]:
    """Definition metadata of an asset stored in `spec` (plus companion tables written in the same
    transaction): the asset page shows the columns and the table name."""
    meta: dict[str, Any] = {"dagster/column_schema": table_schema(spec), "dagster/table_name": spec.name}
    if companions:
        meta["companion_tables"] = ", ".join(c.name for c in companions)
    return meta


def row_counts(wh: Warehouse, spec: TableSpec, written: int) -> dict[str, int]:
    """Materialization metadata: `dagster/row_count` is the rows this partition wrote (the UI plots it per
    partition); the whole table's count is `table_row_count`."""
    return {"dagster/row_count": written, "table_row_count": wh.count(spec)}


def rounded(value: Any, digits: int = DIGITS) -> Any:
    """Floats rounded for display, also inside lists and dicts."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, Mapping):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not isinstance(value, dg.MetadataValue):
        return [rounded(v, digits) for v in value]
    return value


# What a person opens a label partition for, shown first in this order (the UI keeps the order given); the
# bookkeeping (row counts, timings, files) follows as the asset lists it
LEADS = ("key_frame_thumbnail", "key_frame", "score_plot", "preview", "people_on_key_frame", "score_plot_lines")


def materialization(metadata: Mapping[str, Any], digits: int = DIGITS) -> dict[str, Any]:
    """Plain floats and JSON values rounded; other metadata values as given; pictures and previews first (LEADS)."""
    out = {}
    lead = [k for k in LEADS if k in metadata]
    for key in [*lead, *(k for k in metadata if k not in lead)]:
        value = metadata[key]
        if isinstance(value, dg.JsonMetadataValue):
            value = dg.MetadataValue.json(rounded(value.data, digits))
        elif not isinstance(value, dg.MetadataValue):
            value = rounded(value, digits)
        out[key] = value
    return out


DATA_FOLDER = "data_folder"  # the metadata entry naming the data folder the relative paths are under


def paths(**named: str | Path | None) -> dict[str, dg.MetadataValue]:
    """File links for the UI: each `name=path` as a path relative to the data folder (absolute when it lies
    outside), plus `data_folder` naming the folder once when any path is relative. None values are left out."""
    out: dict[str, dg.MetadataValue] = {}
    relative = False
    for name, path in named.items():
        if path is None or str(path) == "":
            continue
        rel = relative_to_root(path)
        relative = relative or rel is not None
        out[name] = dg.MetadataValue.path(rel if rel is not None else str(Path(path).absolute()))
    if relative:
        out[DATA_FOLDER] = dg.MetadataValue.path(str(data_root()))
    return out


def image(path: Path, caption: str, thumbnail: Path | None = None) -> dict[str, dg.MetadataValue]:
    """An image the UI renders (Markdown with the picture inline) and the file it was written to; with a
    `thumbnail` (small enough for `inline_bytes`), `<caption>_thumbnail` first: the UI shows it on the first screen,
    where the full picture waits behind "[Show Markdown]" (core/render/inline.py)."""
    meta: dict[str, dg.MetadataValue] = {}
    if thumbnail is not None:
        meta[f"{caption}_thumbnail"] = dg.MetadataValue.md(md_image(f"{caption}_thumbnail", thumbnail.read_bytes(),
                                                                    MIME[thumbnail.suffix.lower()]))
    data = path.read_bytes()
    if len(data) <= MAX_INLINE_IMAGE_BYTES:
        meta[caption] = dg.MetadataValue.md(md_image(caption, data, MIME.get(path.suffix.lower(), "image/jpeg")))
    return {**meta, **paths(**{f"{caption}_file": path})}
