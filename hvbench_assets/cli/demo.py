"""`hvbench demo`: the main job on generated sample clips (or --videos DIR), printed (hvbench_assets/demo/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hvbench_assets.cli.common import command


def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--videos", type=Path, default=None, help="a folder of your own videos instead of generated samples")


@command("demo", "run the main job on sample clips (or --videos DIR) on the local instance and print the result", _demo_args)
def _demo(args: argparse.Namespace) -> int:
    from hvbench_assets.demo.main import main as demo_main

    return demo_main(["--videos", str(args.videos)] if args.videos else [])
