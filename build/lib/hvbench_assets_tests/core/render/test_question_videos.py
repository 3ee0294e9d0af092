"""Question videos: the AVAD audio reversal (picture untouched) and the render cache per (clip, marking)."""

from __future__ import annotations

import av
import numpy as np

from hvbench_assets.core.media import load_audio, probe_video, write_video
from hvbench_assets.core.media.encode import AUDIO_RATE
from hvbench_assets.core.render.questions import (
    question_video_path,
    render_question_video,
    reverse_audio_before,
    reversed_before,
)


def _video_with_chirp(path, seconds=4.0, fps=25):
    t = np.arange(int(seconds * AUDIO_RATE)) / AUDIO_RATE
    audio = (0.4 * np.sin(2 * np.pi * (200 + 150 * t) * t)).astype(np.float32)  # rising pitch: reversal is visible
    frames = (np.full((120, 160, 3), (i * 5) % 255, np.uint8) for i in range(int(seconds * fps)))
    return write_video(path, frames, fps=fps, audio=audio)


def _corr(a, b):
    n = min(len(a), len(b))
    return float(np.corrcoef(a[:n], b[:n])[0, 1])


def _best_lag_corr(a, b, max_lag=2048):
    """AAC adds a short priming delay: compare at the best small lag."""
    return max(_corr(a[lag:], b) if lag >= 0 else _corr(a, b[-lag:]) for lag in range(-max_lag, max_lag + 1, 16))


def test_reversed_before_is_a_time_reverse_of_the_head_only():
    a = np.arange(10, dtype=np.float32)
    assert reversed_before(a, 0.4, 10).tolist() == [3, 2, 1, 0, 4, 5, 6, 7, 8, 9]
    assert reversed_before(a, 0.0, 10).tolist() == a.tolist()


def test_avad_video_reverses_audio_before_the_cut_and_copies_the_picture(tmp_path):
    src = _video_with_chirp(tmp_path / "src.mp4")
    dst = reverse_audio_before(src, tmp_path / "avad.mp4", cut_s=1.5)
    rate = 16000
    orig, new = load_audio(src, sample_rate=rate), load_audio(dst, sample_rate=rate)
    cut = int(1.5 * rate)
    margin = 800  # 50 ms around the cut, where the codec smears the discontinuity
    assert _best_lag_corr(orig[: cut - margin][::-1], new[margin:cut]) > 0.9  # head: time-reversed
    assert _best_lag_corr(orig[cut + margin :], new[cut + margin :]) > 0.95  # tail: the same samples
    assert _best_lag_corr(orig[: cut - margin], new[: cut - margin]) < 0.5  # the head really changed
    with av.open(str(src)) as a, av.open(str(dst)) as b:
        pa = [bytes(p) for p in a.demux(a.streams.video[0]) if p.size]
        pb = [bytes(p) for p in b.demux(b.streams.video[0]) if p.size]
    assert pa == pb  # picture packets copied, not re-encoded
    info = probe_video(dst)
    assert info.has_audio and abs(info.duration_s - 4.0) < 0.1


def test_marking_none_is_the_clip_and_renders_are_cached(tmp_path):
    src = _video_with_chirp(tmp_path / "src.mp4", seconds=1.0)
    assert question_video_path(tmp_path, src, "sha", {"kind": "none"}) == src
    m = {"kind": "reversed_audio", "cut_s": 0.5}
    first = render_question_video(src, "sha", [], m, tmp_path / "q")
    mtime = first.stat().st_mtime_ns
    assert render_question_video(src, "sha", [], m, tmp_path / "q") == first and first.stat().st_mtime_ns == mtime
    assert question_video_path(tmp_path / "q", src, "other-sha", m) != first  # new clip content, new file
