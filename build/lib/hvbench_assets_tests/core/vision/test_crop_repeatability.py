"""L1's crop clips are the same pictures on every run: L3 and L7 measure them, and L7's verdict on a face near
its threshold followed x264's run-to-run differences (ASD's answer on two_people_talking could change)."""

import hashlib

import av

from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.pipeline import track_video
from hvbench_assets_tests.conftest import shared_clip


def _video_digest(path) -> str:
    """The coded pictures (the container's own bytes hold nothing L3 or L7 read)."""
    digest = hashlib.md5()
    with av.open(str(path)) as container:
        for packet in container.demux(video=0):
            if packet.size:
                digest.update(bytes(packet))
    return digest.hexdigest()


def test_two_runs_of_l1_write_identical_crop_clips(tmp_path):
    clip = shared_clip("two_people_talking.mp4")  # six tracks: twelve crop encoders at once
    backend = build_backend("offline")
    runs = [track_video(clip, tmp_path / f"run{i}", backend) for i in range(2)]
    digests = [{t["track_id"]: (_video_digest(t["face_clip_path"]), _video_digest(t["body_clip_path"]))
                for t in r.tracks} for r in runs]
    assert len(digests[0]) >= 4
    assert digests[0] == digests[1]
