"""`hvbench status`: what the warehouse knows about the inbox, in plain lines.

Registered files with their partition keys and clips, then every inbox entry the inbox sensor passes over
and why (hidden names, non-videos, symlinks outside the allowed roots, files still being copied, ...).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from hvbench_assets.cli.common import CommandExit, command, existing_warehouse, warehouse_arg

if TYPE_CHECKING:
    from hvbench_assets.core.warehouse import Warehouse


@command("status", "registered inbox files and every inbox entry the sensor passes over, with the reason", warehouse_arg)
def _status(args: argparse.Namespace) -> int:
    from hvbench_assets.settings_table import status_lines as settings_status_lines

    try:
        wh = existing_warehouse(args, " yet: nothing registered (drop videos into the inbox, or run `hvbench demo`)",
                                code=0)
        print("\n".join(status_lines(wh)))
    except CommandExit:  # no warehouse yet: the settings still print
        pass
    home = os.environ.get("DAGSTER_HOME")
    print("\n".join(instance_lines(Path(home) if home else None)))
    print("\n".join(settings_status_lines()))
    return 0


def instance_lines(home: Path | None) -> list[str]:
    """Whether the Dagster instance uses hvbench's instance class (its pooled event log, backfills seen within 5 s);
    a home seeded before the class existed keeps Dagster's until its dagster.yaml names it."""
    project = "dagster_home/dagster.yaml"
    if home is None:
        return ["\ndagster instance: DAGSTER_HOME is not set (scripts/demo.sh uses ./dagster_home)"]
    config = home / "dagster.yaml"
    if not config.exists():
        return [f"\ndagster instance: {home} has no dagster.yaml (Dagster's defaults; `hvbench demo` seeds it "
                f"with {project})"]
    try:
        data = yaml.safe_load(config.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        return [f"\ndagster instance: {config} is unreadable ({type(exc).__name__}: {exc})"]
    named = (data.get("instance_class") or {}) if isinstance(data, dict) else {}
    if named.get("class") == "HvbenchInstance":
        return [f"\ndagster instance: {config}: hvbench's instance class (pooled event log, backfills seen within 5 s)"]
    return [f"\ndagster instance: {config}: Dagster's own instance class; copy the `instance_class` block of "
            f"{project} into it for hvbench's pooled event log and backfills seen within 5 s (docs/configuration.md)"]


def status_lines(wh: Warehouse) -> list[str]:
    from hvbench_assets.core.ingest.tables import CLIPS, INBOX_SKIPS, RAW_VIDEOS
    from hvbench_assets.core.media.paths import resolve

    lines = [f"warehouse: {wh.path}"]
    registered = wh.rows(RAW_VIDEOS, order_by="raw_video_id") if wh.has_table(RAW_VIDEOS.name) else []
    clips = {}
    if wh.has_table(CLIPS.name):
        for r in wh.query("SELECT raw_video_id, count(*) AS n, count(*) FILTER (WHERE kept) AS kept "
                          "FROM clips GROUP BY raw_video_id"):
            clips[r["raw_video_id"]] = r
    lines.append(f"\nregistered files: {len(registered)}")
    for r in registered:
        c = clips.get(r["raw_video_id"])
        split = f"{c['kept']} of {c['n']} clip(s) kept" if c else "not split yet"
        lines.append(f"  raw_videos/{r['raw_video_id']}  {resolve(r['path'])}  ({split})")
    skips = wh.query(f'SELECT * FROM "{INBOX_SKIPS.name}" ORDER BY inbox, path') if wh.has_table(INBOX_SKIPS.name) else []
    lines.append(f"\npassed over by the inbox sensor: {len(skips)}")
    inbox = None
    for r in skips:
        if r["inbox"] != inbox:
            inbox = r["inbox"]
            lines.append(f"  in {resolve(inbox)}:")
        lines.append(f"    {r['path']}: {r['reason']}")
    return lines
