"""Copying packets up to any frame (B-frames, any GOP): exactly the frames of the range, none decoded."""

from fractions import Fraction

import av
import numpy as np
import pytest

from hvbench_assets.core.media import iter_frames, load_audio, probe_video
from hvbench_assets.core.media.encode import AUDIO_RATE, copy_packets
from hvbench_assets.core.media.mp4 import trim_video_end
from hvbench_assets_tests.decode_counter import count_decodes

BITS, BLOCK = 9, 16


def stamped_source(path, n: int = 150, fps: int = 25, cuts=(53, 104), keyint: int = 250, bframes: int = 3,
                   pyramid: str = "normal", size=(320, 240), audio: bool = True):
    """H.264 whose every frame shows its own index in binary blocks along the top, shots changing
    colour at `cuts`, keyframes every `keyint` frames only (x264, no scene-cut keyframes)."""
    w, h = size
    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=fps)
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    vs.options = {"preset": "veryfast", "x264-params":
                  f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes={bframes}:b-pyramid={pyramid}"}
    astream = out.add_stream("aac", rate=AUDIO_RATE, layout="mono") if audio else None
    colours = ((200, 40, 40), (20, 230, 230), (128, 128, 128), (40, 160, 40))
    for i in range(n):
        img = np.full((h, w, 3), colours[sum(i >= c for c in cuts) % len(colours)], np.uint8)
        img[100:140, (i * 6) % (w - 40) : (i * 6) % (w - 40) + 40] = 255
        for b in range(BITS):
            img[:BLOCK, b * BLOCK : (b + 1) * BLOCK] = 255 if (i >> b) & 1 else 0
        frame = av.VideoFrame.from_ndarray(img, format="bgr24")
        frame.pts, frame.time_base = i, Fraction(1, fps)
        out.mux(vs.encode(frame))
    out.mux(vs.encode(None))
    if astream is not None:
        t = np.arange(int(n / fps * AUDIO_RATE)) / AUDIO_RATE
        samples = (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)
        for k in range(0, len(samples), 1024):
            af = av.AudioFrame.from_ndarray(samples[k : k + 1024].reshape(1, -1), format="fltp", layout="mono")
            af.sample_rate, af.pts = AUDIO_RATE, k
            out.mux(astream.encode(af))
        out.mux(astream.encode(None))
    out.close()
    return path


def frame_ids(path) -> list[int]:
    """The index stamped on every frame a reader is shown."""
    return [sum(1 << b for b in range(BITS) if f.image[2 : BLOCK - 2, b * BLOCK + 2 : (b + 1) * BLOCK - 2].mean() > 128)
            for f in iter_frames(path)]


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
