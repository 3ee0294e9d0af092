from hvbench_assets.core.speakers.persons import person_groups, person_of, speaking_persons

L2 = {"status": "ok", "persons": [[0, 3], [1], [2, 4]]}


def test_speaking_is_counted_per_person():
    rows = [{"track_id": t, "speaking": t in (0, 3)} for t in range(5)]
    assert speaking_persons(rows, L2) == [[0, 3]]  # two speaking tracks, one person: exactly one speaker
    rows[4]["speaking"] = True
    assert speaking_persons(rows, L2) == [[0, 3], [2, 4]]


def test_tracks_l2_does_not_know_are_their_own_person():
    rows = [{"track_id": t, "speaking": True} for t in (0, 5)] + [{"track_id": None, "speaking": False}]
    assert speaking_persons(rows, L2) == [[0], [5]]
    assert speaking_persons(rows, None) == [[0], [5]]
    assert speaking_persons(rows, {"status": "no_faces", "persons": []}) == [[0], [5]]
    groups = person_groups([0, 1, 3], L2)
    assert groups == [[0, 3], [1]] and person_of(3, groups) == 0 and person_of(9, groups) is None
