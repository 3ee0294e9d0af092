"""Audio extraction: any container to mono float32 PCM at a fixed rate (16 kHz by default)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from hvbench_assets.core.media.container import open_media, time_origin
from hvbench_assets.core.media.errors import MediaError, NoAudioError

SAMPLE_RATE = 16_000
SEEK_AFTER_S = 5.0  # windows starting later than this seek instead of decoding the whole track


def load_audio(
    path: str | Path, sample_rate: int = SAMPLE_RATE, start_s: float = 0.0, end_s: float | None = None
) -> np.ndarray:
    """Decode the first audio stream, downmix to mono and resample. Returns float32 in [-1, 1].
    Times are on the file's time line (container.time_origin), the same as frame times: sample 0 is
    the sound at `start_s`, and where the audio stream starts later than that the gap is silence, so
    sound stays in sync with picture. Raises NoAudioError when the file has no audio stream."""
    path = Path(path)
    container = open_media(path)
    try:
        if not container.streams.audio:
            raise NoAudioError(path)
        stream = container.streams.audio[0]
        origin = time_origin(container)
        if start_s > SEEK_AFTER_S:  # a window deep in a long source: do not decode from 0
            container.seek(int((origin + start_s - 1.0) / stream.time_base), stream=stream, backward=True)
        resampler = av.AudioResampler(format="flt", layout="mono", rate=sample_rate)
        chunks: list[np.ndarray] = []
        first_t = None
        try:
            for frame in container.decode(stream):
                t = float(frame.time) - origin if frame.time is not None else None
                if first_t is None:
                    first_t = t if t is not None else 0.0
                if end_s is not None and t is not None and t > end_s + 0.5:
                    break  # past the window
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().reshape(-1))
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
        except av.error.FFmpegError as exc:
            if not chunks:
                raise MediaError(path, f"audio stream cannot be decoded ({exc})") from exc
    finally:
        container.close()
    audio = np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)
    a = int(round((start_s - (first_t or 0.0)) * sample_rate))  # where start_s falls in `audio`
    if a < 0:  # the stream starts after start_s: silence until it does
        audio, a = np.concatenate([np.zeros(-a, np.float32), audio]), 0
    b = None if end_s is None else max(a, a + int(round((end_s - start_s) * sample_rate)))
    return np.clip(audio[a:b], -1.0, 1.0)


def write_wav(path: str | Path, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> Path:
    """16-bit PCM WAV, for tools and people who want a file."""
    import wave

    path = Path(path)
    pcm = (np.clip(audio, -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return path
