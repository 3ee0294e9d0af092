"""Equal frames give equal files: the clips L1-L11 measure and the question videos models see must not change
on a rerun. Real frames (a shared clip), encoded repeatedly the two ways the pipeline encodes: plain
(`write_video`: cut clips, question videos) and on a keyframe grid (`VideoEncoder(gop=...)`: scene_clips' shots).
With x264's MB-tree these gave 2-4 distinct pictures over 12 encodes (benchmarks/encodes.py)."""

import hashlib

import av
import pytest

from hvbench_assets.core.media import iter_frames, write_video
from hvbench_assets.core.media.encode import VideoEncoder
from hvbench_assets_tests.conftest import shared_clip


def _pictures(path) -> str:
    """Hash of the coded video packets (the container's bytes around them are not the question)."""
    with av.open(str(path)) as c:
        return hashlib.md5(b"".join(bytes(p) for p in c.demux(video=0))).hexdigest()


@pytest.fixture(scope="module")
def frames():
    return [f.image.copy() for f in iter_frames(shared_clip("two_people_talking.mp4"))][:120]


def test_write_video_repeats_itself(frames, tmp_path):
    runs = {_pictures(write_video(tmp_path / f"plain{i}.mp4", frames, fps=30)) for i in range(8)}
    assert len(runs) == 1


def test_keyframe_grid_encoder_repeats_itself(frames, tmp_path):
    def encode(i):
        enc = VideoEncoder(tmp_path / f"grid{i}.mp4", 30, gop=30)
        for f in frames:
            enc.push(f)
        return _pictures(enc.close())

    assert len({encode(i) for i in range(8)}) == 1
