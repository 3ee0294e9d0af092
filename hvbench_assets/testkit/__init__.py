"""Media, truth sets, fake servers and small harnesses shared by the test-suite (hvbench_assets_tests/) and the
benchmark scripts (benchmarks/): both import them from here, neither imports the other.

Library code only: nothing here imports pytest or hvbench_assets_tests (hvbench_assets_tests/test_imports.py
checks it); a helper that needs pytest (a fixture, a skip) stays in the tests. Nothing in the rest of the package
imports this package (it is the top floor of the import graph). Import the modules one by one: this file
imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path

# the real clips beside the project (../shared/videos): the top folder's clips and the speakers set
SHARED_VIDEOS = Path(__file__).resolve().parents[2].parent / "shared" / "videos"
