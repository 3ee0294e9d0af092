"""Real label chains for tests downstream of the labels (tasks, synthesis, curation, benchmark); the chain itself
(LABELS, `materialize`, `resources`) is hvbench_assets/testkit/label_chain.py.

Labels L1-L10 are materialized offline once per test session and clip; each consumer gets its own copy
of the warehouse (and data folder) to write tasks, reviews or exports into, so tests stay independent
without paying minutes of decoding and detection again."""

from __future__ import annotations

import shutil
from pathlib import Path

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.resources import WarehouseResource
from hvbench_assets.testkit.label_chain import LABELS, materialize
from hvbench_assets_tests.conftest import shared_clip

_BUILT: dict[tuple[str, str], Path] = {}
_METADATA: dict[tuple[str, str], dict[str, dict]] = {}  # (clip, key) -> label asset -> its materialization metadata
# The clip of the speaker-based tasks (ASD, AVAD): the talking man of man_talking_head twice in a row beside the
# front woman of two_people_talking frozen on one frame (a still listener), with his voice. 10 s, two people,
# exactly one speaker whose lips clearly follow the voice; two_people_talking itself has no speaker the offline
# L7 can tell from chance (README, "Who speaks").
DUO = "duo.mp4"


def duo_speaker_track(wh: Warehouse, key: str) -> int:
    """The L1 track of DUO's talking man: the face in the left panel (x < 260 of 520)."""
    from hvbench_assets.core.vision.tables import load_tracks

    return next(t.track_id for t in load_tracks(wh, key)
                if sum((b.face[0] + b.face[2]) / 2 for b in t.boxes) / len(t.boxes) < 260)


def clip_path(tmp_path_factory, name: str) -> Path:
    """A shared clip, or DUO built from the shared clips once per session."""
    if name != DUO:
        return shared_clip(name)
    from hvbench_assets.testkit.speaker_composites import SCENES, build_scene

    dst = tmp_path_factory.getbasetemp() / "clips" / DUO
    if not dst.exists():
        root = shared_clip("man_talking_head.mp4").parent
        shared_clip("two_people_talking.mp4")
        dst.parent.mkdir(exist_ok=True)
        build_scene(next(s for s in SCENES if s.name == "still_woman"), root, dst, seconds=5.0, loops=2)
    return dst


def _build(tmp_path_factory, name: str, key: str) -> Path:
    if (name, key) not in _BUILT:
        root = tmp_path_factory.getbasetemp() / f"labels-{key}"
        root.mkdir()
        path = clip_path(tmp_path_factory, name)
        wh = WarehouseResource(path=str(root / "wh.duckdb")).get()
        wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(path).as_row(), "status": "ok", "reason": None}])
        result, _ = materialize(root, key, LABELS)
        _METADATA[(name, key)] = {e.asset_key.to_user_string(): e.materialization.metadata
                                  for e in result.get_asset_materialization_events()}
        _BUILT[(name, key)] = root
    return _BUILT[(name, key)]


def label_metadata(tmp_path_factory, name: str, key: str) -> dict[str, dict]:
    """Label asset -> the metadata its materialization showed, for shared clip `name` as partition `key`."""
    _build(tmp_path_factory, name, key)
    return _METADATA[(name, key)]


def labelled(tmp_path_factory, name: str, key: str) -> Path:
    """A fresh root (wh.duckdb + data/) holding the offline labels of shared clip `name` as partition `key`."""
    built = _build(tmp_path_factory, name, key)
    root = tmp_path_factory.mktemp(key)
    Warehouse(built / "wh.duckdb").checkpoint()  # the file alone is copied: no rows left in its WAL
    shutil.copy2(built / "wh.duckdb", root / "wh.duckdb")
    if (built / "data").exists():
        shutil.copytree(built / "data", root / "data")
    return root
