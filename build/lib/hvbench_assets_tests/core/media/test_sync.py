"""Picture and sound stay in sync when a source's streams do not start at 0 (issue: sound 0.84 s
ahead of picture). Measured in the cut clips: a flash and a beep made at the same instant."""

import av
import pytest

from hvbench_assets.core.ingest.scenes import ClipFilter
from hvbench_assets.core.ingest.split import split_video
from hvbench_assets.core.media import cut_clip, probe_video
from hvbench_assets.core.media.container import time_origin
from hvbench_assets_tests.core.media.sync_sources import FPS, beep_times, flash_times, offset_source

EVENTS = [1.6, 4.4]  # one in each shot
SHOT_CHANGE = 3.0
ANY_MOTION = ClipFilter(min_motion=0.0)


def _in_sync(clip, expected_events: int):
    flashes, beeps = flash_times(clip), beep_times(clip)
    assert len(flashes) == len(beeps) == expected_events, (flashes, beeps)
    for f, b in zip(flashes, beeps):
        assert abs(f - b) <= 1.0 / FPS, f"{clip.name}: flash at {f:.3f}s, beep at {b:.3f}s"
    return flashes


@pytest.mark.parametrize("video_start,audio_start", [(0.85, 0.0), (0.0, 0.5), (0.85, 0.5)])
def test_shots_cut_from_offset_streams_keep_picture_and_sound_together(tmp_path, video_start, audio_start):
    src = offset_source(tmp_path / "src.mp4", video_start, audio_start, EVENTS, SHOT_CHANGE)
    header = probe_video(src, count_frames=False)
    result = split_video(src, header, ANY_MOTION, lambda i: tmp_path / f"clip{i}.mp4")
    segs = result.analysis.segments
    assert len(segs) == 2 and all(s.kept for s in segs)
    with av.open(str(src)) as c:  # the time line starts with the earliest stream (AAC priming included)
        origin = time_origin(c)
    assert abs(origin - min(video_start, audio_start)) < 0.03
    # stored ranges are presentation times: the first shot starts with the first picture
    assert abs(segs[0].start_s - (video_start - origin)) <= 0.5 / FPS
    assert abs(segs[1].start_s - (SHOT_CHANGE - origin)) <= 1.0 / FPS
    for seg, event in zip(segs, EVENTS):
        flashes = _in_sync(result.clips[seg.index], 1)
        assert abs(seg.start_s + flashes[0] - (event - origin)) <= 1.0 / FPS  # the clip is where the range says


def test_a_re_encoded_window_of_an_offset_source_is_in_sync(tmp_path):
    src = offset_source(tmp_path / "src.mp4", 0.85, 0.0, EVENTS, SHOT_CHANGE)
    _in_sync(cut_clip(src, tmp_path / "cut.mp4", 0.0, 6.0), 2)  # starts before the picture does
    _in_sync(cut_clip(src, tmp_path / "late.mp4", 4.0, 5.5), 1)  # decoded from the keyframe before 4 s
