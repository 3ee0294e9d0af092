"""The real-human verdict on real clips and on generated faces that are not persons (face_kinds.py), through L1."""

from __future__ import annotations

import numpy as np
import pytest

from hvbench_assets.core.vision import realness
from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.pipeline import track_video
from hvbench_assets.core.vision.realness import Opinion, parse_opinion, verdict_rows
from hvbench_assets.core.vision.tables import Track
from hvbench_assets_tests.face_kinds import DRAWN_SEED, drawn_clip, toon_clip


def _tracks(path, out) -> list[Track]:
    res = track_video(path, out, build_backend("offline"))
    return [Track(video_id="v", track_id=t["track_id"], first_frame=t["first_frame"], last_frame=t["last_frame"],
                  first_s=t["first_s"], last_s=t["last_s"], coverage=t["coverage"],
                  face_size_median=t["face_size_median"], fps=t["fps"], face_clip_path=t["face_clip_path"],
                  body_clip_path=t["body_clip_path"]) for t in res.tracks]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    base = tmp_path_factory.mktemp("drawn")
    return _tracks(drawn_clip(base / "drawn.mp4", DRAWN_SEED), base / "l1")


def test_real_clip_tracks_are_human(man_talking_head, two_children, tmp_path):
    for i, clip in enumerate((man_talking_head, two_children)):
        rows = verdict_rows(_tracks(clip, tmp_path / str(i)))
        assert rows and all(r["status"] == "ok" and r["is_human"] for r in rows), rows
        assert all(r["method"].startswith(realness.STATS_METHOD) and r["version"] and len(r["reasons"]) == 3
                   for r in rows)
        assert set(rows[0]["features"]) == set(realness.FEATURES) and rows[0]["n_samples"] >= 8


def test_drawn_face_is_not_human(drawn):
    assert drawn, "YuNet no longer fires on the drawn face: pick another DRAWN_SEED"
    rows = verdict_rows(drawn)
    assert all(r["status"] == "ok" and not r["is_human"] and r["score"] < 0.5 for r in rows), rows


def test_cartoonized_real_clip_is_not_human(man_talking_head, tmp_path):
    rows = verdict_rows(_tracks(toon_clip(tmp_path / "toon.mp4", man_talking_head), tmp_path / "l1"))
    assert rows and all(not r["is_human"] for r in rows), rows


def test_describer_opinion_is_weighed_in(drawn):
    asked = []

    def ask(frames):
        asked.append(len(frames))
        return Opinion(1.0, "real (1.00): insists", "call-1")

    rows = verdict_rows(drawn, ask=ask, describer="p1-m1")
    stats = verdict_rows(drawn)
    for r, s in zip(rows, stats):
        w = realness.DESCRIBER_WEIGHT
        assert r["score"] == pytest.approx((1 - w) * s["stats_score"] + w * 1.0, abs=1e-3)
        assert r["model_score"] == 1.0 and r["call_id"] == "call-1" and r["method"].endswith("+ describer")
        assert r["version"].endswith("+p1-m1") and r["reasons"][0].startswith("describer: real")
    assert asked and all(n >= 8 for n in asked)
    unusable = verdict_rows(drawn, ask=lambda frames: Opinion(None, "unreadable reply 'maybe'"))
    assert all(r["score"] == s["score"] and "statistics alone" in r["reasons"][0] for r, s in zip(unusable, stats))


def test_parse_opinion():
    assert parse_opinion('{"real": false, "confidence": 0.9, "what": "a cartoon"}').score == pytest.approx(0.1)
    assert parse_opinion('Sure: {"real": true, "confidence": 2}').score == 1.0
    bad = parse_opinion("I cannot tell")
    assert bad.score is None and "unreadable" in bad.answer


def test_unreadable_crop_clip_is_a_failed_row_naming_it(drawn, tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    bad = Track(**{**drawn[0].__dict__, "track_id": 7, "face_clip_path": broken})
    rows = verdict_rows([bad, drawn[0]])
    assert rows[0]["status"] == "failed" and "broken.mp4" in rows[0]["reason"]
    assert rows[1]["status"] == "ok"


def test_statistics_separate_flat_drawings_from_noisy_photos():
    rng = np.random.default_rng(0)
    flat = np.full((120, 120, 3), (90, 160, 230), np.uint8)
    photo = np.clip(flat.astype(int) + rng.normal(0, 6, flat.shape), 0, 255).astype(np.uint8)
    a, b = realness.frame_statistics(flat), realness.frame_statistics(photo)
    assert a["colours"] < b["colours"] and a["flat"] > b["flat"] and a["grain"] < b["grain"]
