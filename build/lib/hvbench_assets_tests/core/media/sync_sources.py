"""Sources whose streams do not start at 0 (as phones and broadcast files often are), with flashes
and beeps at known instants, and a way to measure both in a cut clip."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from hvbench_assets.core.media import iter_frames, load_audio

FPS = 25
RATE = 48_000
FLASH = (slice(0, 48), slice(0, 64))


def offset_source(path: Path, video_start: float, audio_start: float, events: list[float],
                  shot_change: float, end: float = 6.0, size=(320, 240)) -> Path:
    """Video from `video_start` and audio from `audio_start` to `end` (presentation times, written as
    packet timestamps, which mp4 keeps as edit lists). A white corner and a 1 kHz beep start at each
    time in `events`; the picture changes colour at `shot_change` (a shot cut); a square moves."""
    w, h = size
    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=FPS)
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    vs.codec_context.time_base = vs.time_base = Fraction(1, 1000)
    ast = out.add_stream("aac", rate=RATE, layout="mono")
    t = video_start
    while t < end - 1e-9:
        second = t >= shot_change
        img = np.full((h, w, 3), (150, 60, 40) if second else (40, 90, 150), np.uint8)
        x = int((w - 60) * ((t * 0.4) % 1.0))
        img[h // 2 - 30 : h // 2 + 30, x : x + 60] = 230 if second else 20
        if any(abs(t - e) < 0.5 / FPS for e in events):
            img[FLASH] = 255  # a corner, so the flash is not a shot cut
        frame = av.VideoFrame.from_ndarray(img, format="bgr24")
        frame.pts, frame.time_base = int(round(t * 1000)), Fraction(1, 1000)
        for p in vs.encode(frame):
            out.mux(p)
        t += 1.0 / FPS
    for p in vs.encode(None):
        out.mux(p)
    ts = audio_start + np.arange(int(round((end - audio_start) * RATE))) / RATE
    beep = np.zeros_like(ts)
    for e in events:
        on = (ts >= e) & (ts < e + 0.08)
        beep[on] = 0.6 * np.sin(2 * np.pi * 1000 * (ts[on] - e))
    samples = (beep + 0.01 * np.sin(2 * np.pi * 150 * ts)).astype(np.float32)  # a faint hum, never silent
    first = int(round(audio_start * RATE))
    for i in range(0, len(samples), 1024):
        frame = av.AudioFrame.from_ndarray(samples[i : i + 1024].reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = RATE, first + i, Fraction(1, RATE)
        for p in ast.encode(frame):
            out.mux(p)
    for p in ast.encode(None):
        out.mux(p)
    out.close()
    return path


def flash_times(path: Path) -> list[float]:
    """Times of frames with a white corner (frame index / fps: how a player of the constant-rate clip
    shows them)."""
    frames = list(iter_frames(path))
    fps = 1.0 / np.median(np.diff([f.t for f in frames]))
    return [f.index / fps for f in frames if f.image[FLASH].mean() > 200]


def beep_times(path: Path, rate: int = 16_000) -> list[float]:
    """Onsets of the beeps: where the loud 1 kHz burst first passes a quarter of its peak."""
    audio = np.abs(load_audio(path, sample_rate=rate))
    loud = audio > 0.25 * audio.max()
    onsets = np.flatnonzero(loud & ~np.concatenate([[False], loud[:-1]]))
    keep = [o for i, o in enumerate(onsets) if i == 0 or o - onsets[i - 1] > 0.3 * rate]  # one per burst
    return [o / rate for o in keep]
