"""Question videos: the clip with the marking a task asks for, encoded once per (clip, marking).

Markings: `red_box` (the target's face boxes in red), `numbers` (each offered person's face boxes with the
clip's person number), `none` (the clip itself, nothing encoded) and `reversed_audio` (picture copied untouched,
the sound time-reversed before `cut_s`). Boxes come from the stored L1 rows, never a new detection.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import av
import numpy as np

from hvbench_assets.core.media import MediaError, NoAudioError, load_audio
from hvbench_assets.core.media.encode import AUDIO_RATE
from hvbench_assets.core.media.mp4 import trim_video_end
from hvbench_assets.core.render.marked import render_marked
from hvbench_assets.core.vision.tables import Track, boxes_by_frame


def marking_key(clip_sha256: str, marking: Mapping[str, Any]) -> str:
    blob = json.dumps({"clip": clip_sha256, **marking}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def question_video_path(out_dir: Path, clip_path: Path, clip_sha256: str, marking: Mapping[str, Any]) -> Path:
    """Where the question video of a marking lives (the clip itself for `none`)."""
    if marking["kind"] == "none":
        return Path(clip_path)
    return Path(out_dir) / f"{marking['kind']}-{marking_key(clip_sha256, marking)}.mp4"


def render_question_video(clip_path: Path, clip_sha256: str, tracks: Sequence[Track], marking: Mapping[str, Any],
                          out_dir: Path) -> Path:
    """The question video for `marking`; an existing file for the same clip content and marking is reused."""
    dst = question_video_path(out_dir, clip_path, clip_sha256, marking)
    if dst.exists():
        return dst
    kind = marking["kind"]
    if kind == "red_box":
        ids = set(marking["track_ids"])
        return render_marked(clip_path, dst, boxes_by_frame([t for t in tracks if t.track_id in ids]), highlight=ids)
    if kind == "numbers":
        numbers = {int(t): int(n) for t, n in marking["numbers"].items()}
        return render_marked(clip_path, dst, boxes_by_frame([t for t in tracks if t.track_id in numbers]),
                             numbers=numbers)
    if kind == "reversed_audio":
        return reverse_audio_before(clip_path, dst, float(marking["cut_s"]))
    raise ValueError(f"unknown marking {kind!r}")


def reversed_before(audio: np.ndarray, cut_s: float, rate: int) -> np.ndarray:
    """The samples before `cut_s` in reverse order, the rest unchanged."""
    cut = min(len(audio), int(round(cut_s * rate)))
    return np.concatenate([audio[:cut][::-1], audio[cut:]])


def reverse_audio_before(src: Path, dst: Path, cut_s: float, rate: int = AUDIO_RATE) -> Path:
    """Copy the picture packet by packet (untouched) and encode the sound reversed before `cut_s`."""
    try:
        audio = load_audio(src, sample_rate=rate)
    except NoAudioError as exc:
        raise MediaError(src, "has no audio stream to reverse") from exc
    samples = np.clip(reversed_before(audio, cut_s, rate).astype(np.float32), -1, 1)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.stem}.{os.getpid()}.tmp.mp4")
    with av.open(str(src)) as inp:
        vin = inp.streams.video[0]
        out = av.open(str(tmp), mode="w", options={"movflags": "+faststart"})
        try:
            vout = out.add_stream_from_template(vin)
            aout = out.add_stream("aac", rate=rate, layout="mono")
            shown_end, hidden, first = 0.0, 0, None
            for packet in inp.demux(vin):
                if packet.dts is None:
                    continue
                if packet.is_discard:
                    hidden += 1  # a reference the clip's edit list hides (a copy cut off a keyframe)
                elif packet.pts is not None:
                    t = float(packet.pts * packet.time_base)
                    first = t if first is None else min(first, t)
                    shown_end = max(shown_end, t + float((packet.duration or 0) * packet.time_base))
                packet.stream = vout
                out.mux(packet)
            for i in range(0, len(samples), 1024):
                frame = av.AudioFrame.from_ndarray(samples[i : i + 1024].reshape(1, -1), format="fltp", layout="mono")
                frame.sample_rate, frame.pts = rate, i
                out.mux(aout.encode(frame))
            out.mux(aout.encode(None))
        except BaseException:
            out.close()
            tmp.unlink(missing_ok=True)
            raise
        out.close()
    if hidden:
        try:
            trim_video_end(tmp, shown_end - (first or 0.0))  # keep them hidden in the copy too
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    os.replace(tmp, dst)
    return dst
