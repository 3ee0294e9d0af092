import numpy as np
import pytest

from hvbench_assets.core.media import (
    MediaError,
    NoAudioError,
    cut_clip,
    iter_frames,
    load_audio,
    probe_video,
)
from hvbench_assets.testkit.media_factory import bad_media_corpus, moving_square_video
from hvbench_assets_tests.conftest import CLIP_NAMES, shared_clip

EXPECTED = {  # from ../shared/videos/README.md
    "man_talking_head.mp4": (5.0, 25, 844, 844),
    "two_children.mp4": (4.3, 25, 1280, 720),
    "two_people_talking.mp4": (22.5, 30, 480, 360),
}


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_probe_real_clips(name):
    p = probe_video(shared_clip(name))
    duration, fps, w, h = EXPECTED[name]
    assert abs(p.duration_s - duration) < 0.1
    assert round(p.fps) == fps and (p.width, p.height) == (w, h)
    assert p.has_audio and p.audio_sample_rate == 44100 and p.audio_codec == "aac"
    assert abs(p.frame_count - p.duration_s * p.fps) <= 2
    assert len(p.sha256) == 64 and p.file_size > 0


def test_frame_sampling_rate_and_window(two_people_talking):
    frames = list(iter_frames(two_people_talking, sample_fps=2, start_s=4.0, end_s=8.0, max_side=240))
    assert len(frames) == 8
    assert all(4.0 - 1e-6 <= f.t < 8.0 for f in frames)
    assert np.allclose(np.diff([f.t for f in frames]), 0.5, atol=0.04)
    assert max(frames[0].image.shape[:2]) == 240 and frames[0].image.dtype == np.uint8


def test_every_frame_when_no_rate(man_talking_head):
    frames = list(iter_frames(man_talking_head))
    assert len(frames) == 125 and [f.index for f in frames[:3]] == [0, 1, 2]


def test_audio_is_16k_mono_float(man_talking_head):
    a = load_audio(man_talking_head)
    assert a.dtype == np.float32 and a.ndim == 1
    assert abs(len(a) / 16000 - 5.0) < 0.1
    assert 0.05 < float(np.abs(a).max()) <= 1.0  # speech, not silence
    part = load_audio(man_talking_head, start_s=1.0, end_s=2.0)
    assert len(part) == 16000


def test_no_audio_is_a_specific_error(tmp_path):
    silent = moving_square_video(tmp_path / "silent.mp4", tone_hz=None)
    with pytest.raises(NoAudioError, match="no audio stream"):
        load_audio(silent)


def test_cut_keeps_audio_and_time_range(tmp_path, two_people_talking):
    out = cut_clip(two_people_talking, tmp_path / "cut.mp4", 3.0, 6.5)
    p = probe_video(out)
    assert abs(p.duration_s - 3.5) < 0.1 and p.video_codec == "h264" and p.has_audio
    assert abs(p.frame_count - 105) <= 1
    src = list(iter_frames(two_people_talking, start_s=3.0, end_s=3.05))[0].image.astype(float)
    first = next(iter_frames(out)).image.astype(float)
    assert np.abs(src - first).mean() < 6  # the first frame of the cut is the frame at 3.0 s
    assert abs(len(load_audio(out)) / 16000 - 3.5) < 0.1


def test_bad_files_give_clear_errors(tmp_path):
    corpus = bad_media_corpus(tmp_path)
    expected = {
        "truncated": "truncated or corrupt",
        "empty": "empty file",
        "text": "not a readable media container",
        "audio_only": "audio-only file",
    }
    for kind, path in corpus.items():
        with pytest.raises(MediaError) as err:
            probe_video(path)
        assert str(path) in str(err.value) and expected[kind] in str(err.value)
    with pytest.raises(MediaError, match="does not exist"):
        probe_video(tmp_path / "missing.mp4")


def test_odd_unicode_name_probes(tmp_path, man_talking_head):
    odd = tmp_path / "Café – vidéo №1 (final) 日本.mp4"
    odd.write_bytes(man_talking_head.read_bytes())
    assert probe_video(odd).frame_count == 125


def _portrait_phone_video(path, n=25):
    """Stored 320x240 with a display matrix turning it 90 degrees clockwise, as phones record portrait."""
    import av

    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=25)
    vs.width, vs.height, vs.pix_fmt = 320, 240, "yuv420p"
    vs.set_display_rotation(-90)
    for i in range(n):
        img = np.zeros((240, 320, 3), np.uint8)
        img[:40, :40] = 255  # a marker in the stored top-left corner
        frame = av.VideoFrame.from_ndarray(img, format="bgr24")
        frame.pts = i
        for p in vs.encode(frame):
            out.mux(p)
    for p in vs.encode(None):
        out.mux(p)
    out.close()
    return path


def test_phone_rotation_is_applied_like_a_player_does(tmp_path):
    src = _portrait_phone_video(tmp_path / "portrait.mp4")
    p = probe_video(src)
    assert (p.width, p.height) == (240, 320)
    img = next(iter_frames(src)).image
    assert img.shape[:2] == (320, 240)
    assert img[:40, -40:].mean() > 200 and img[:40, :40].mean() < 50  # turned clockwise: marker top-right
    small = next(iter_frames(src, max_side=160)).image
    assert small.shape[:2] == (160, 120)
    cut = cut_clip(src, tmp_path / "cut.mp4", 0.0, 0.6)  # re-encoded upright, no flag needed
    c = probe_video(cut)
    assert (c.width, c.height) == (240, 320)
    assert next(iter_frames(cut)).image[:40, -40:].mean() > 200


def test_audio_window_deep_in_a_file_matches_a_full_decode(two_people_talking):
    full = load_audio(two_people_talking)
    part = load_audio(two_people_talking, start_s=15.0, end_s=17.0)  # seeks instead of decoding from 0
    assert len(part) == 32000
    ref = full[15 * 16000 : 17 * 16000]
    lag = np.argmax(np.correlate(part[8000:9600], ref[7800:9800], mode="valid")) - 200
    assert abs(lag) <= 16  # within 1 ms of the full decode
    assert np.corrcoef(part[1000:-1000], ref[1000:-1000])[0, 1] > 0.95


def _variable_rate_video(path, flash_at=2.0):
    """15 fps for 2 s, then 35 fps for 2 s (about 25 on average), a white frame at `flash_at`."""
    from fractions import Fraction

    import av

    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=25)
    vs.width, vs.height, vs.pix_fmt = 160, 120, "yuv420p"
    vs.codec_context.time_base = vs.time_base = Fraction(1, 1000)
    for t in list(np.arange(0, 2.0, 1 / 15)) + list(np.arange(2.0, 4.0, 1 / 35)):
        frame = av.VideoFrame.from_ndarray(np.full((120, 160, 3), 255 if abs(t - flash_at) < 1e-6 else 20, np.uint8),
                                           format="bgr24")
        frame.pts, frame.time_base = int(round(t * 1000)), Fraction(1, 1000)
        for p in vs.encode(frame):
            out.mux(p)
    for p in vs.encode(None):
        out.mux(p)
    out.close()
    return path


def test_cutting_a_variable_rate_video_keeps_picture_on_time(tmp_path):
    src = _variable_rate_video(tmp_path / "vfr.mp4")
    cut = cut_clip(src, tmp_path / "cut.mp4", 0.0, 4.0)
    p = probe_video(cut)
    frames = [f.image.mean() for f in iter_frames(cut)]
    assert abs(len(frames) - round(4.0 * p.fps)) <= 1  # constant rate: frames = duration x fps
    flash = next(i for i, m in enumerate(frames) if m > 100)
    assert abs(flash / p.fps - 2.0) <= 1.0 / p.fps  # at 2.0 s, as in the source (not 30 frames in = 1.2 s)


def test_probe_counts_frames_without_decoding_them(two_people_talking):
    from hvbench_assets.testkit.decode_counter import count_decodes

    with count_decodes() as counts:
        p = probe_video(two_people_talking)
    assert p.frame_count == 673  # every packet demuxed and counted
    assert counts.video(two_people_talking) <= 1  # only the first frame (for its rotation flag)


def test_a_window_decodes_only_from_the_keyframe_before_it(tmp_path, two_people_talking):
    from hvbench_assets.core.media.encode import VideoEncoder
    from hvbench_assets.testkit.decode_counter import count_decodes

    enc = VideoEncoder(tmp_path / "gop.mp4", 30, gop=30)  # a keyframe every second
    for f in iter_frames(two_people_talking, end_s=4.0):
        enc.push(f.image)
    src = enc.close()
    with count_decodes() as counts:
        frames = list(iter_frames(src, start_s=2.5, end_s=3.0))
    assert len(frames) == 15 and abs(frames[0].t - 2.5) < 1e-6
    assert counts.video(src) <= 15 + 15 + 4  # from the keyframe at 2 s (not 1 s earlier)
    with count_decodes() as counts:
        assert abs(next(iter_frames(src, start_s=2.0)).t - 2.0) < 1e-6
    assert counts.video(src) <= 4  # a window starting on a keyframe decodes nothing before it


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_frames_are_the_colours_libswscale_gives(name):
    """BT.601 limited-range frames are converted with OpenCV (several times faster); they stay within about
    a level of libswscale's conversion. Other matrices and full range keep libswscale's own."""
    import av

    from hvbench_assets.core.media.frames import to_bgr

    with av.open(str(shared_clip(name))) as c:
        frame = next(c.decode(video=0))
    ours, theirs = to_bgr(frame).astype(int), frame.to_ndarray(format="bgr24").astype(int)
    assert ours.shape == theirs.shape and np.abs(ours - theirs).mean() < 1.5
    for space, rng in ((1, 1), (5, 2)):  # BT.709; BT.601 at full range
        frame.colorspace, frame.color_range = space, rng
        assert np.array_equal(to_bgr(frame), frame.to_ndarray(format="bgr24"))
