import pytest

from hvbench_assets.core.ingest.keys import (
    InvalidKey,
    assign_raw_key,
    clip_key,
    slugify,
    validate_key,
)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("man_talking_head", "man_talking_head"),
        ("My Vidéo (1)", "my_video_1"),
        ("Café – vidéo №1 (final)", "cafe_video_no1_final"),
        ("  ..hidden--name__  ", "hidden--name"),
        ("x; DROP TABLE clips;--", "x_drop_table_clips"),
    ],
)
def test_slugify_keeps_a_safe_character_set(name, expected):
    assert slugify(name) == expected
    validate_key(slugify(name))


def test_slugify_never_returns_empty_or_long_keys():
    assert slugify("日本語のビデオ").startswith("video_")
    assert slugify("日本語のビデオ") != slugify("中文视频")
    long = slugify("a" * 300)
    assert len(long) <= 64
    validate_key(long)


def test_same_stem_in_two_files_gets_two_stable_keys():
    taken: dict[str, str] = {}
    k1 = assign_raw_key("talk.mp4", taken)
    taken[k1] = "talk.mp4"
    k2 = assign_raw_key("sub/Talk.MOV", taken)
    assert k1 == "talk" and k2 != k1 and k2.startswith("talk-")
    taken[k2] = "sub/Talk.MOV"
    assert assign_raw_key("sub/Talk.MOV", taken) == k2  # stable on a rescan
    assert assign_raw_key("talk.mp4", taken) == k1


def test_invalid_keys_are_rejected_with_a_reason():
    for bad in ["", "Upper", "with space", "../etc", "a" * 81]:
        with pytest.raises(InvalidKey, match="must match"):
            validate_key(bad)
    assert clip_key("talk", 3) == "talk__003"
