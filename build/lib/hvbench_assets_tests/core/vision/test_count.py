"""L2 person count from track spans and face descriptors."""

import numpy as np

from hvbench_assets.core.vision.count import TrackSpan, count_people, max_simultaneous

A = np.zeros(128)
A_NEAR = A.copy()
A_NEAR[0] = 0.3
B = np.zeros(128)
B[1] = 0.7


def test_co_occurring_tracks_are_never_merged_even_with_equal_descriptors():
    res = count_people([TrackSpan(0, 0, 100, A), TrackSpan(1, 50, 150, A)])
    assert res.count == 2 and res.max_simultaneous == 2 and res.merges == []


def test_split_track_of_one_person_is_merged():
    res = count_people([TrackSpan(0, 0, 100, A), TrackSpan(1, 120, 200, A_NEAR), TrackSpan(2, 0, 200, B)])
    assert res.count == 2 and res.persons == [[0, 1], [2]]
    assert res.merges == [{"tracks": [0], "into": [1], "distance": 0.3}]
    assert "merge" in res.method and "3 L1 tracks" in res.method


def test_different_descriptors_or_missing_ones_stay_apart():
    assert count_people([TrackSpan(0, 0, 10, A), TrackSpan(1, 20, 30, B)]).count == 2
    assert count_people([TrackSpan(0, 0, 10, A), TrackSpan(1, 20, 30, None)]).count == 2
    assert count_people([]).count == 0


def test_a_merge_may_not_create_a_group_that_shares_a_frame():
    # 1 and 2 overlap; 0 is close to both but may join only one of them
    res = count_people([TrackSpan(0, 0, 10, A), TrackSpan(1, 20, 40, A_NEAR), TrackSpan(2, 30, 50, A_NEAR)])
    assert res.count == 2


def test_max_simultaneous():
    spans = [TrackSpan(0, 0, 10, None), TrackSpan(1, 10, 20, None), TrackSpan(2, 11, 12, None)]
    assert max_simultaneous(spans) == 2
