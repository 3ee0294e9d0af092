"""IoU linking, gap tolerance and track expiry on hand-made detections."""

from hvbench_assets.core.vision.tracker import Detection, IouTracker, shift


def det(x, y=50.0, s=40.0, score=1.0):
    return Detection((x, y, x + s, y + s), score)


def test_overlapping_detections_extend_a_track_and_far_ones_start_new():
    tr = IouTracker(iou_threshold=0.5, max_gap=10)
    a = tr.update(0, [det(100), det(300)])
    assert [p for _, _, p in a] == [None, None]
    b = tr.update(5, [det(305), det(104)])  # swapped order; each joins its own track
    keys = {d.box[0]: (t.key, prev) for t, d, prev in b}
    assert keys[104.0] == (0, 0) and keys[305.0] == (1, 0)
    c = tr.update(10, [det(200)])  # far from both: new track
    assert c[0][0].key == 2 and c[0][2] is None


def test_one_detection_joins_only_one_track():
    tr = IouTracker(max_gap=10)
    tr.update(0, [det(100)])
    tr.update(0, [det(102)])  # a duplicate track at the same place
    out = tr.update(5, [det(101)])
    assert len(out) == 1 and out[0][2] == 0


def test_small_shift_links_when_iou_falls_below_threshold():
    # a face that moved a third of its size in one detection step: IoU ~0.5, centres close
    tr = IouTracker(iou_threshold=0.5, max_gap=10, max_shift=0.5)
    tr.update(0, [det(100)])
    out = tr.update(5, [det(115, s=44)])
    assert out[0][2] == 0
    assert shift((0, 0, 10, 10), (5, 0, 15, 10)) == 0.5
    # a scaled-up face far away is not linked
    out = tr.update(10, [det(190, s=80)])
    assert out[0][2] is None


def test_tracks_survive_gaps_up_to_max_gap():
    tr = IouTracker(max_gap=10)
    tr.update(0, [det(100)])
    assert tr.expire(10) == []
    out = tr.update(10, [det(101)])
    assert out[0][2] == 0  # linked across the 10-frame gap
    assert [t.key for t in tr.expire(21)] == [0]
    assert tr.alive == []
    assert tr.update(22, [det(101)])[0][2] is None  # too late: a new track
    assert len(tr.expire(None)) == 1


def test_links_across_long_gaps_need_the_identity_check():
    tr = IouTracker(max_gap=50)
    tr.update(0, [det(100)])
    refuse = lambda track, d: False  # noqa: E731
    assert tr.update(5, [det(101)], verify=refuse, verify_after=10)[0][2] == 0  # short gap: no check
    out = tr.update(30, [det(101)], verify=refuse, verify_after=10)
    assert out[0][2] is None  # long gap and the check says "different face": a new track
    assert [t.key for t in tr.expire(60)] == [0]
    out = tr.update(60, [det(101)], verify=lambda t, d: True, verify_after=10)
    assert out[0][2] == 30 and out[0][0].key == 1  # the check passes: linked across the gap
