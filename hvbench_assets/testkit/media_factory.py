"""Generated media for tests and benchmarks: synthetic videos (PyAV), concatenations of real clips, files a user
will drop sooner or later. Speech (espeak-ng, skipping a test without it) is hvbench_assets_tests/speech.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hvbench_assets.core.media import iter_frames, load_audio, probe_video, write_video
from hvbench_assets.core.media.encode import AUDIO_RATE


def moving_square_video(path: Path, seconds: float = 3.0, fps: float = 25.0, size=(320, 240),
                        tone_hz: float | None = 440.0, color=(40, 180, 220)) -> Path:
    """A checkered square sliding over a gradient, optionally with a sine tone: cheap, deterministic, moving."""
    w, h = size
    n = int(round(seconds * fps))
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 255 // max(1, w - 1)), (yy * 255 // max(1, h - 1)), np.full_like(xx, 90)], -1).astype(np.uint8)

    side = max(16, h // 3)
    checker = ((np.indices((side, side)).sum(0) // 8) % 2).astype(bool)
    tile = np.where(checker[..., None], np.array(color, np.uint8), np.uint8(255) - np.array(color, np.uint8))

    def frames():
        for i in range(n):
            img = base.copy()
            x = int((w - side) * i / max(1, n - 1))
            img[h // 2 - side // 2 : h // 2 - side // 2 + side, x : x + side] = tile
            yield img

    audio = None
    if tone_hz:
        t = np.arange(int(seconds * AUDIO_RATE)) / AUDIO_RATE
        audio = (0.3 * np.sin(2 * np.pi * tone_hz * t)).astype(np.float32)
    return write_video(path, frames(), fps=fps, audio=audio)


def concat_videos(paths: list[Path], dst: Path, size=(480, 360), fps: float = 25.0) -> tuple[Path, list[float]]:
    """Concatenate clips (resized to one size, audio kept) and return the cut times in seconds."""
    import cv2

    frames, audio, cuts, t = [], [], [], 0.0
    for p in paths:
        info = probe_video(p)
        for f in iter_frames(p):
            frames.append(cv2.resize(f.image, size))
        n_src = info.frame_count
        a = load_audio(p, sample_rate=AUDIO_RATE)
        want = int(round(n_src / fps * AUDIO_RATE))
        audio.append(np.pad(a, (0, max(0, want - len(a))))[:want])
        t += n_src / fps
        cuts.append(round(t, 3))
    write_video(dst, iter(frames), fps=fps, audio=np.concatenate(audio))
    return dst, cuts[:-1]


def audio_only_file(path: Path, seconds: float = 2.0) -> Path:
    """An AAC-only mp4 container: valid media, but no video stream."""
    import av

    out = av.open(str(path), mode="w", format="mp4")
    stream = out.add_stream("aac", rate=AUDIO_RATE, layout="mono")
    t = np.arange(int(seconds * AUDIO_RATE)) / AUDIO_RATE
    samples = (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)
    for i in range(0, len(samples), 1024):
        frame = av.AudioFrame.from_ndarray(samples[i : i + 1024].reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate = AUDIO_RATE
        frame.pts = i
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))
    out.close()
    return path


def bad_media_corpus(folder: Path) -> dict[str, Path]:
    """Files a user will drop sooner or later, keyed by what is wrong with them."""
    folder.mkdir(parents=True, exist_ok=True)
    good = moving_square_video(folder / "source_for_truncation.tmpvideo.mp4", seconds=3.0)
    data = good.read_bytes()
    corpus = {
        "truncated": folder / "truncated.mp4",
        "empty": folder / "empty.mp4",
        "text": folder / "notes.mp4",
        "audio_only": folder / "audio_only.mp4",
    }
    corpus["truncated"].write_bytes(data[: len(data) // 3])
    corpus["empty"].write_bytes(b"")
    corpus["text"].write_text("this is not a video\n" * 20)
    audio_only_file(corpus["audio_only"])
    good.unlink()
    return corpus
