"""Pictures that tell the truth (issue 51): the speaker score plot's axis holds every score and draws the threshold,
coinciding lines stay visible and the legend wraps; box labels on a crowded still never overlap."""

from __future__ import annotations

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.render.marked import NUMBER_BGR, draw_boxes, place_tags
from hvbench_assets.core.speakers.plot import legend_places, render_score_plot, same_as, y_range
from hvbench_assets_tests.conftest import shared_clip


def _overlap(a, b) -> int:
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))


def test_score_plot_axis_threshold_twins_and_legend(tmp_path):
    rows = [{"track_id": 0, "first_frame": 0, "fps": 25.0, "scores": list(np.linspace(-0.5, 2.5, 50)), "speaking": True},
            *({"track_id": t, "first_frame": 0, "fps": 25.0, "scores": [-1.0] * 50} for t in (1, 2, 3))]
    assert y_range(rows) == (-1.0, 3.0)  # +2.5 is on the axis, not clipped at +1
    assert y_range([{"scores": [0.2, -0.3]}]) == (-1.0, 1.0)
    assert same_as(rows) == {2: 1, 3: 1}  # three identical flat lines
    names = {0: 1, 1: 2, 2: 3, 3: 4}
    path = render_score_plot(rows, tmp_path / "plot.png", numbers=names)
    img = cv2.imread(str(path))
    assert img.shape[:2] == (240, 720)
    # each of the three coinciding lines is visible in its own colour along the -1 line
    from hvbench_assets.core.speakers.plot import PALETTE

    band = img[150:240]
    for k in (1, 2, 3):
        assert (np.abs(band.astype(int) - PALETTE[k]).sum(axis=2) < 60).sum() > 20, f"line {k} hidden"
    # a legend too long for one line wraps instead of running off the picture
    assert legend_places([200, 200, 200, 200], 48, 710) == [(48, 0), (262, 0), (476, 0), (48, 1)]
    many = [{**rows[1], "track_id": t, "scores": [t / 10] * 50, "speaking": True} for t in range(14)]
    assert cv2.imread(str(render_score_plot(many, tmp_path / "many.png", numbers={t: t + 1 for t in range(14)}))).shape[0] > 240


def test_labels_on_a_crowded_row_of_faces_never_overlap():
    # six faces side by side, narrower than their labels (a T2H still of a crowd), and two stacked
    boxes = [(10 + 40 * i, 100, 46 + 40 * i, 140) for i in range(6)] + [(300, 5, 340, 40), (300, 42, 340, 80)]
    tags = place_tags(boxes, [(70, 20)] * len(boxes), (360, 640))
    assert all(_overlap(a, b) == 0 for i, a in enumerate(tags) for b in tags[i + 1 :])
    assert all(0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 360 for x1, y1, x2, y2 in tags)
    # drawn on a real frame of a shared clip, at the still's scale
    img = next(iter_frames(shared_clip("five_people_grid.mp4"))).image.copy()
    h, w = img.shape[:2]
    row = [(w * (0.1 + 0.08 * i), h * 0.4, w * (0.1 + 0.08 * i) + w * 0.06, h * 0.5) for i in range(6)]
    drawn = draw_boxes(img, [(b, NUMBER_BGR, f"P{i + 1} t{i + 10}") for i, b in enumerate(row)], max(h, w) / 720)
    assert len(drawn) == 6 and all(_overlap(a, b) == 0 for i, a in enumerate(drawn) for b in drawn[i + 1 :])
