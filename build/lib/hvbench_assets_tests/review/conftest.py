import shutil

import pytest

from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets_tests.review.harness import two_clip_root

_BUILT = {}


@pytest.fixture(scope="session")
def two_clips_built(tmp_path_factory):
    if "root" not in _BUILT:
        _BUILT["root"] = two_clip_root(tmp_path_factory)
    return _BUILT["root"]


@pytest.fixture(scope="module")
def two_clips(two_clips_built, tmp_path_factory):
    """A private copy of the two-clip warehouse and data folder (paths inside rows still name the built root's
    data folder, which stays in place for the session)."""
    root = tmp_path_factory.mktemp("review")
    Warehouse(two_clips_built / "wh.duckdb").checkpoint()  # the file alone is copied: no rows left in its WAL
    shutil.copy2(two_clips_built / "wh.duckdb", root / "wh.duckdb")
    return root
