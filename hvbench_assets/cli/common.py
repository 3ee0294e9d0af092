"""What every `hvbench` command module shares: the command registry, the default warehouse and its guard.

Command modules import this one; hvbench_assets/cli/__init__.py imports them and builds the parser, so no
command module imports the package that registers it. Imports stay light: `hvbench --help` loads no DuckDB,
Dagster or numpy."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from hvbench_assets.settings_table import open_warehouse, warehouse_location

COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}

WAREHOUSE_HELP = "DuckDB file (default: HVBENCH_WAREHOUSE or data/hvbench.duckdb)"


def command(name: str, help_text: str, add_arguments: Callable[[argparse.ArgumentParser], None]):
    def register(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help_text, add_arguments, run)
        return run
    return register


class CommandExit(Exception):
    """Ends a command with this exit code (its message is already printed); main() returns the code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def default_warehouse() -> Path:
    """Same default as the Dagster `warehouse` resource: HVBENCH_WAREHOUSE, else <data dir>/hvbench.duckdb.
    HVBENCH_WAREHOUSE may also be a DuckLake location (`ducklake:postgres:<conninfo>`, docs/scale-out.md)."""
    return warehouse_location()


def warehouse_exists(path: Path) -> bool:
    """A DuckLake location is not a file: it exists for the commands that read it (they say what is missing)."""
    from hvbench_assets.core.warehouse.ducklake import is_ducklake

    return is_ducklake(path) or path.exists()


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=Path, default=None, help=WAREHOUSE_HELP)


def warehouse_path(args: argparse.Namespace) -> Path:
    return args.warehouse or default_warehouse()


def existing_warehouse(args: argparse.Namespace, missing: str = "", code: int = 2):
    """The Warehouse of --warehouse (or the default) when it exists. Otherwise prints `no warehouse at PATH`
    followed by `missing` and ends the command with `code`: 0 (nothing to show yet) prints to stdout, an error
    code to stderr."""
    path = warehouse_path(args)
    if not warehouse_exists(path):
        print(f"no warehouse at {path}{missing}", file=sys.stderr if code else sys.stdout)
        raise CommandExit(code)
    return open_warehouse(path)
