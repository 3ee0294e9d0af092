"""Copying packets up to any frame (B-frames, any GOP): exactly the frames of the range, none decoded."""

import pytest

from hvbench_assets.core.media import load_audio, probe_video
from hvbench_assets.core.media.encode import AUDIO_RATE, copy_packets
from hvbench_assets.core.media.mp4 import trim_video_end
from hvbench_assets.testkit.decode_counter import count_decodes
from hvbench_assets.testkit.stamped_video import frame_ids, stamped_source


@pytest.fixture(scope="module")
def bframe_source(tmp_path_factory):
    return stamped_source(tmp_path_factory.mktemp("copy") / "b3_pyramid.mp4")


@pytest.mark.parametrize("end", range(44, 60))
def test_a_copy_may_end_on_any_frame(tmp_path, bframe_source, end):
    """Every end position relative to the B-frame groups: the frames shown are exactly 0..end-1,
    packets a B-frame needs from after the end are decoded but hidden, and nothing is decoded to copy."""
    dst = tmp_path / "clip.mp4"
    audio = load_audio(bframe_source, sample_rate=AUDIO_RATE, end_s=end / 25)
    with count_decodes() as counts:
        assert copy_packets(bframe_source, dst, 0.0, end / 25, audio) == dst
    assert counts.video() == 0
    assert frame_ids(dst) == list(range(end))
    with count_decodes() as counts:
        p = probe_video(dst)
    assert p.frame_count == end and abs(p.duration_s - end / 25) < 0.02
    assert counts.video(dst) == 1  # the probe reads only the first frame, even with hidden packets
    assert abs(len(load_audio(dst)) / 16000 - end / 25) < 0.05


@pytest.mark.parametrize("bframes,pyramid", [(0, "none"), (2, "none"), (3, "strict")])
def test_copies_between_keyframes_of_other_gop_structures(tmp_path, bframes, pyramid):
    src = stamped_source(tmp_path / "src.mp4", n=100, keyint=25, bframes=bframes, pyramid=pyramid, audio=False)
    for start, end in ((0, 37), (25, 43), (50, 99), (75, None)):
        dst = tmp_path / f"clip{start}.mp4"
        assert copy_packets(src, dst, start / 25, None if end is None else end / 25) == dst
        assert frame_ids(dst) == list(range(start, 100 if end is None else end))


def test_a_copy_must_start_on_a_keyframe(tmp_path, bframe_source):
    assert copy_packets(bframe_source, tmp_path / "x.mp4", 2.0, 3.0) is None
    assert not (tmp_path / "x.mp4").exists()


def test_trimming_needs_an_edit_list(tmp_path):
    from hvbench_assets.core.media import MediaError

    bad = tmp_path / "not.mp4"
    bad.write_bytes(b"\0\0\0\x08free" * 4)
    with pytest.raises(MediaError, match="edit list"):
        trim_video_end(bad, 1.0)


def test_a_question_video_copying_such_a_clip_keeps_the_hidden_frames_hidden(tmp_path, bframe_source):
    from hvbench_assets.core.render.questions import reverse_audio_before

    clip = copy_packets(bframe_source, tmp_path / "clip.mp4", 0.0, 54 / 25,
                        load_audio(bframe_source, sample_rate=AUDIO_RATE, end_s=54 / 25))
    out = reverse_audio_before(clip, tmp_path / "avad.mp4", 1.0)
    assert frame_ids(out) == list(range(54))  # not the next shot's frame after the cut
