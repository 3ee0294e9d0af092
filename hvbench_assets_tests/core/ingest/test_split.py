"""A raw file becomes clips in one decode pass (frames counted by a hook around PyAV itself)."""

import numpy as np
import pytest

from hvbench_assets.core.ingest.scenes import ClipFilter
from hvbench_assets.core.ingest.split import split_video
from hvbench_assets.core.media import MediaError, iter_frames, load_audio, probe_video
from hvbench_assets.testkit.decode_counter import count_decodes
from hvbench_assets.testkit.media_factory import bad_media_corpus
from hvbench_assets_tests.core.media.test_media import _portrait_phone_video, _variable_rate_video

ANY = dict(min_motion=0.0, min_width=64, min_height=64)


def _split(src, out, **kw):
    header = probe_video(src, count_frames=False)
    with count_decodes() as counts:
        result = split_video(src, header, ClipFilter(**kw), lambda i: out / f"clip{i}.mp4")
    return result, counts.video(src) / header.frame_count


def test_windows_of_a_long_shot_are_cut_while_decoding_once(tmp_path, two_people_talking):
    result, decoded = _split(two_people_talking, tmp_path, max_clip_s=10.0)
    assert result.strategy == "encode" and decoded <= 1.01  # one decode (+ the probe's first frame)
    segs = result.analysis.segments
    assert len(segs) == 3 and all(s.kept for s in segs)
    source = [f.image.astype(float) for f in iter_frames(two_people_talking, max_side=240)]
    for seg in segs:
        clip = result.clips[seg.index]
        p = probe_video(clip)
        assert p.fps == 30 and abs(p.frame_count - round(seg.duration_s * 30)) <= 1
        assert abs(len(load_audio(clip)) / 16000 - seg.duration_s) < 0.05
        first = next(iter_frames(clip, max_side=240)).image.astype(float)
        assert np.abs(first - source[round(seg.start_s * 30)]).mean() < 4  # frame-accurate start
    assert segs[0].start_s == 0 and segs[-1].end_s == result.analysis.duration_s


def test_a_single_short_constant_rate_h264_shot_is_copied(tmp_path, man_talking_head):
    result, decoded = _split(man_talking_head, tmp_path, min_motion=0.5)
    assert result.strategy == "copy" and result.how == {0: "copied file"} and decoded <= 1.01
    assert result.clips[0].read_bytes() == man_talking_head.read_bytes()


def test_variable_rate_source_becomes_a_constant_rate_clip_on_time(tmp_path):
    src = _variable_rate_video(tmp_path / "vfr.mp4")
    result, decoded = _split(src, tmp_path, **ANY)
    assert result.strategy == "encode" and decoded <= 1.01
    flashes = []
    for seg in result.analysis.segments:  # the white frame also starts a shot
        clip = result.clips[seg.index]
        fps = probe_video(clip).fps
        frames = [f.image.mean() for f in iter_frames(clip)]
        assert abs(len(frames) - round(seg.duration_s * fps)) <= 1  # constant rate: frames = duration x fps
        flashes += [seg.start_s + i / fps for i, m in enumerate(frames) if m > 100]
    assert len(flashes) == 1 and abs(flashes[0] - 2.0) <= 1.0 / 24  # at 2.0 s, as in the source


def test_phone_rotation_is_applied_to_encoded_clips(tmp_path):
    src = _portrait_phone_video(tmp_path / "portrait.mp4", n=50)
    result, _ = _split(src, tmp_path, max_clip_s=1.0, min_duration_s=0.5, **ANY)  # 2 s: windows, encoded
    assert result.strategy == "encode" and len(result.clips) == 2
    for clip in result.clips.values():
        c = probe_video(clip)
        assert (c.width, c.height) == (240, 320)
        assert next(iter_frames(clip)).image[:40, -40:].mean() > 200  # upright without a flag


def test_bad_input_names_the_file_and_leaves_no_clip(tmp_path):
    corpus = bad_media_corpus(tmp_path / "bad")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(MediaError, match="truncated or corrupt") as err:
        header = probe_video(corpus["truncated"], count_frames=False)  # the header still looks fine
        split_video(corpus["truncated"], header, ClipFilter(**ANY), lambda i: out / f"clip{i}.mp4")
    assert str(corpus["truncated"]) in str(err.value)
    assert list(out.iterdir()) == []  # no clip and no temporary shot file left behind


def _three_shots(path, gop: int):
    """6 s of H.264 at 25 fps with sound, shots changing at 2 s and 4 s; keyframes every `gop` frames only."""
    from hvbench_assets.core.media.encode import AUDIO_RATE, VideoEncoder

    enc = VideoEncoder(path, 25, gop=gop, with_audio=True)
    for i in range(150):
        img = np.full((240, 320, 3), ((200, 40, 40), (20, 230, 230), (128, 128, 128))[i // 50], np.uint8)
        img[100:140, (i * 6) % 280 : (i * 6) % 280 + 40] = 255
        enc.push(img)
    t = np.arange(6 * AUDIO_RATE) / AUDIO_RATE
    return enc.close((0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32))


def test_shots_starting_on_keyframes_are_copied_as_packets(tmp_path):
    result, decoded = _split(_three_shots(tmp_path / "cuts_on_keys.mp4", gop=50), tmp_path, **ANY)
    assert result.strategy == "copy" and decoded <= 1.01
    assert result.how == {0: "copied packets", 1: "copied packets", 2: "copied packets"}
    for seg in result.analysis.segments:
        p = probe_video(result.clips[seg.index])
        assert p.frame_count == 50 and p.has_audio


def test_cuts_off_keyframes_switch_to_encoding_while_decoding(tmp_path):
    result, decoded = _split(_three_shots(tmp_path / "cuts_off_keys.mp4", gop=250), tmp_path, **ANY)
    assert result.strategy == "copy, encode 2 of 3 shots (starting off a keyframe)"
    assert result.how == {0: "copied packets", 1: "encoded while decoding", 2: "encoded while decoding"}
    assert decoded <= 1.01  # nothing decoded twice: the first shot's packets end off a keyframe
    for seg in result.analysis.segments:
        assert probe_video(result.clips[seg.index]).frame_count == 50


@pytest.mark.parametrize("keyint,bframes,pyramid,cuts", [
    (250, 3, "normal", (53, 104)),  # no keyframe after the first: every later shot is encoded
    (25, 3, "normal", (50, 113)),  # a cut on a keyframe (copied), one off (encoded)
    (40, 0, "none", (47, 121)),  # no B-frames
    (250, 2, "strict", (61, 62 + 45)),
])
def test_every_kept_shot_holds_exactly_its_frames_after_one_decode(tmp_path, keyint, bframes, pyramid, cuts):
    """Cuts on and off keyframes with several GOP structures: each clip shows exactly the source's
    frames of its shot (stamped indices), with its sound, and the file is decoded once."""
    from hvbench_assets.testkit.stamped_video import frame_ids, stamped_source

    src = stamped_source(tmp_path / "src.mp4", n=160, keyint=keyint, bframes=bframes, pyramid=pyramid, cuts=cuts)
    result, decoded = _split(src, tmp_path, **ANY)
    assert decoded <= 1.01
    bounds = [0, *cuts, 160]
    segs = result.analysis.segments
    assert [(round(s.start_s * 25), round(s.end_s * 25)) for s in segs] == list(zip(bounds[:-1], bounds[1:]))
    for seg in segs:
        a, b = round(seg.start_s * 25), round(seg.end_s * 25)
        clip = result.clips[seg.index]
        on_key = a % keyint == 0
        assert result.how[seg.index] == ("copied packets" if on_key else "encoded while decoding")
        assert frame_ids(clip) == list(range(a, b))
        assert abs(len(load_audio(clip)) / 16000 - (b - a) / 25) < 0.05
