"""Media helpers shared by every label: probing, frame iteration, audio, encoding, fixed-size crops."""

from hvbench_assets.core.media.audio import SAMPLE_RATE, load_audio, write_wav
from hvbench_assets.core.media.encode import cut_clip, source_audio, write_video
from hvbench_assets.core.media.errors import MediaError, NoAudioError
from hvbench_assets.core.media.frames import Frame, iter_frames
from hvbench_assets.core.media.probe import VideoProbe, file_sha256, probe_video

__all__ = [
    "SAMPLE_RATE", "Frame", "MediaError", "NoAudioError", "VideoProbe", "cut_clip", "file_sha256",
    "iter_frames", "load_audio", "probe_video", "source_audio", "write_video", "write_wav",
]
