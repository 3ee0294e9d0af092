"""A key frame small enough for the UI's first screen (core/render/inline.py): on a real five-person still, the
thumbnail fits a Markdown value the UI shows inline, decodes, is as wide as the budget allows, and keeps the
boxes' tags in their colours (the red target among the amber numbers)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from hvbench_assets.core.render.inline import INLINE_MD_CHARS, MIME, inline_bytes, md_image, thumbnail
from hvbench_assets.core.render.keyframe import render_key_frame
from hvbench_assets.testkit.labels_factory import track
from hvbench_assets_tests.conftest import shared_clip


def _share(rgb: np.ndarray, color_rgb: tuple[int, int, int]) -> float:
    return float((np.abs(rgb.astype(int) - color_rgb).sum(axis=2) < 90).mean())


def test_a_key_frame_thumbnail_fits_inline_and_keeps_its_tags(tmp_path):
    clip = shared_clip("five_people_grid.mp4")
    # five faces along the 1480 x 360 grid, the middle one the red-box target
    tracks = [track(i, 20, 40, x=x, size=90) for i, x in enumerate((165, 265, 700, 975, 1220))]
    alt = "question_key_frame_thumbnail"
    still = render_key_frame(clip, tracks, tmp_path / "q-key_frame.jpg", highlight={2},
                             thumbnail_bytes=inline_bytes(alt))
    assert still is not None and still.path.is_file() and still.thumbnail is not None
    data = still.thumbnail.read_bytes()
    md = md_image(alt, data, MIME[still.thumbnail.suffix])
    assert len(md) < INLINE_MD_CHARS, len(md)  # the UI shows it inline
    small = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert small.shape[1] >= 200 and abs(small.shape[1] / small.shape[0] - 1480 / 360) < 0.2, small.shape
    assert _share(small, (255, 215, 0)) > 0.01 and _share(small, (255, 0, 0)) > 0.003  # amber tags, the red one
    full = np.asarray(Image.open(still.path))
    assert full.shape[1] == 640  # the full still is unchanged: longest side 640


def test_no_thumbnail_when_nothing_fits():
    assert thumbnail(lambda width: np.zeros((width, width, 3), np.uint8), 10) is None
    assert inline_bytes("key_frame_thumbnail") > 600  # room for a picture at all
