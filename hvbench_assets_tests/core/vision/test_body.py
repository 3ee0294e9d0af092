"""The paper's body-box rule, neighbour filling and the face-geometry estimate."""

from hvbench_assets.core.vision.body import (
    contains_face,
    estimate_body,
    fill_missing,
    match_body,
)

FACE = (100.0, 50.0, 140.0, 100.0)  # centre x = 120


def test_match_picks_smallest_centre_distance_plus_area():
    wide = (40.0, 30.0, 200.0, 400.0)  # centred at 120 but large
    tight = (90.0, 40.0, 160.0, 300.0)  # centre 125: 25 + 70*260 = 18225 < 160*370
    elsewhere = (300.0, 40.0, 360.0, 300.0)  # does not contain the face
    assert match_body(FACE, [wide, tight, elsewhere]) == 1
    assert match_body(FACE, [elsewhere]) is None
    assert match_body(FACE, []) is None


def test_centre_distance_breaks_ties_between_equal_areas():
    left = (80.0, 40.0, 150.0, 300.0)  # centre 115
    right = (95.0, 40.0, 165.0, 300.0)  # centre 130, same area
    assert match_body(FACE, [right, left]) == 1


def test_candidate_must_contain_the_face():
    assert contains_face((90.0, 40.0, 160.0, 300.0), FACE)
    assert not contains_face((90.0, 120.0, 160.0, 300.0), FACE)  # starts below the chin
    assert not contains_face((130.0, 40.0, 200.0, 300.0), FACE)  # face centre outside


def test_a_box_holding_the_face_only_near_its_bottom_belongs_to_someone_behind():
    """two_children frame 50 (YOLOX-nano boxes): the adult's torso box above the girl's head is smaller than
    her own box and centred as well, so the area term would pick it if it counted as holding her face."""
    face = (1053.0, 210.0, 1175.0, 360.0)
    own, torso = (975.0, 158.0, 1273.0, 710.0), (949.0, 2.0, 1279.0, 411.0)
    assert not contains_face(torso, face) and contains_face(own, face)
    assert match_body(face, [torso, own]) == 1


def test_fill_missing_averages_the_surrounding_known_boxes():
    a, b = (0.0, 0.0, 10.0, 10.0), (10.0, 10.0, 30.0, 30.0)
    assert fill_missing([a, None, None, b]) == [a, (5.0, 5.0, 20.0, 20.0), (5.0, 5.0, 20.0, 20.0), b]
    assert fill_missing([None, a, None]) == [a, a, a]  # one known side: copied
    assert fill_missing([None, None]) == [None, None]


def test_estimated_body_is_below_the_face_and_inside_the_frame():
    body = estimate_body(FACE, width=640, height=360)
    assert body[0] < FACE[0] and body[2] > FACE[2] and body[1] < FACE[1] and body[3] > FACE[3]
    assert body[1] >= 0 and body[3] <= 360
    assert estimate_body((0.0, 0.0, 40.0, 50.0), 640, 360)[0] == 0.0  # clipped at the left edge
