"""Writing browser-playable H.264/AAC mp4 files: clip cutting and rendering from frames."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np

from hvbench_assets.core.media.audio import load_audio
from hvbench_assets.core.media.errors import MediaError, NoAudioError
from hvbench_assets.core.media.frames import Frame, iter_frames

AUDIO_RATE = 48_000
# Equal frames must give equal files: clips, crops and question videos are what the labels and the models see, so
# a rerun must not change them. x264's MB-tree wrote different pictures from identical frames, on one thread or
# several (benchmarks/encodes.py: 4-6 distinct outputs of 8 encodes of 200 frames with it, 1 without); without it
# files are 1.1-1.9x larger at the same CRF.
REPEATABLE_X264 = "no-mbtree=1"
_I, _ANY = av.video.frame.PictureType.I, av.video.frame.PictureType.NONE


class VideoEncoder:
    """H.264 (yuv420p, faststart) written frame by frame, with optional mono audio at the end.
    Frames are BGR arrays or decoded PyAV frames (passed on without a round trip through BGR); equal frames give
    equal files (REPEATABLE_X264).
    `gop` forces a keyframe exactly every `gop` frames and nowhere else, so the file can later be
    split at those frames by copying packets (see copy_packets). Written to a temporary name and
    renamed by close(), so readers never see half a file."""

    def __init__(self, dst: str | Path, fps: float, crf: int = 20, gop: int | None = None,
                 with_audio: bool = False, audio_rate: int = AUDIO_RATE, x264_params: str = "",
                 preset: str = "veryfast"):
        self.dst = Path(dst)
        if self.dst.exists() and not self.dst.is_file():
            raise MediaError(self.dst, "destination exists and is not a regular file (refusing to replace it)")
        self.dst.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.dst.with_name(f".{self.dst.stem}.{os.getpid()}.{id(self)}.tmp.mp4")
        self.rate = Fraction(fps).limit_denominator(1001)
        self.crf, self.gop, self.x264_params, self.preset = crf, gop, x264_params, preset
        self.with_audio, self.audio_rate = with_audio, audio_rate  # mp4 wants every stream before the first packet
        self.audio_stream = None
        self.out = av.open(str(self.tmp), mode="w", options={"movflags": "+faststart"})
        self.stream = None
        self.frames = 0

    def _open_stream(self, w: int, h: int) -> None:
        vs = self.out.add_stream("libx264", rate=self.rate)
        vs.width, vs.height = w - w % 2, h - h % 2
        vs.pix_fmt = "yuv420p"
        options = {"crf": str(self.crf), "preset": self.preset}
        params = [REPEATABLE_X264] + ([self.x264_params] if self.x264_params else [])
        if self.gop:
            vs.codec_context.gop_size = self.gop
            params.append(f"keyint={self.gop}:min-keyint={self.gop}:scenecut=0")
        if params:
            options["x264-params"] = ":".join(params)
        vs.options = options
        self.stream = vs
        if self.with_audio:
            self.audio_stream = self.out.add_stream("aac", rate=self.audio_rate, layout="mono")

    def push(self, image: np.ndarray | av.VideoFrame) -> None:
        if isinstance(image, av.VideoFrame):
            if self.stream is None:
                self._open_stream(image.width, image.height)
            frame = image.reformat(width=self.stream.width, height=self.stream.height, format="yuv420p")
        else:
            if self.stream is None:
                self._open_stream(image.shape[1], image.shape[0])
            # OpenCV's BGR -> I420 is 8x faster than the encoder's own conversion (0.3 vs 2.5 ms per 480x360
            # frame here), the same BT.601 limited-range matrix (Y within 1 level)
            yuv = cv2.cvtColor(np.ascontiguousarray(image[: self.stream.height, : self.stream.width]),
                               cv2.COLOR_BGR2YUV_I420)
            frame = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
        frame.pts = self.frames
        frame.time_base = 1 / self.rate
        # a decoded frame keeps its source picture type; only our grid may force keyframes
        frame.pict_type = _I if self.gop and self.frames % self.gop == 0 else _ANY
        self.out.mux(self.stream.encode(frame))
        self.frames += 1

    def close(self, audio: np.ndarray | None = None) -> Path:
        try:
            if self.stream is None:
                raise MediaError(self.dst, "no frames to write")
            self.out.mux(self.stream.encode(None))
            if self.audio_stream is not None and audio is not None and len(audio):
                _encode_audio(self.out, self.audio_stream, audio, self.audio_rate)
        except BaseException:
            self.abort()
            raise
        self.out.close()
        os.replace(self.tmp, self.dst)
        return self.dst

    def abort(self) -> None:
        try:
            self.out.close()
        except Exception:  # noqa: BLE001 - already failing; the temporary file goes either way
            pass
        self.tmp.unlink(missing_ok=True)


def write_video(
    dst: str | Path,
    frames: Iterable[np.ndarray],
    fps: float,
    audio: np.ndarray | Callable[[], np.ndarray | None] | None = None,
    audio_rate: int = AUDIO_RATE,
    crf: int = 20,
    x264_params: str = "",
    preset: str = "veryfast",
) -> Path:
    """Encode BGR frames (all the same size) to H.264 (yuv420p, faststart) with optional mono audio.
    `audio` may be a callable, called after the last frame, for streams whose audio span is known only
    then (track crops written while decoding)."""
    wants_audio = audio is not None and (callable(audio) or len(audio) > 0)
    enc = VideoEncoder(dst, fps, crf=crf, with_audio=wants_audio, audio_rate=audio_rate, x264_params=x264_params,
                       preset=preset)
    try:
        for image in frames:
            enc.push(image)
    except BaseException:
        enc.abort()
        raise
    return enc.close(audio() if callable(audio) else audio)


def _encode_audio(out, stream, audio: np.ndarray, rate: int) -> None:
    samples = np.clip(audio.astype(np.float32), -1, 1)
    block = 1024
    for i in range(0, len(samples), block):
        chunk = samples[i : i + block]
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate = rate
        frame.pts = i
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))


def source_audio(src: str | Path, start_s: float = 0.0, end_s: float | None = None, rate: int = AUDIO_RATE) -> np.ndarray | None:
    """The source's audio for a time window at `rate`, or None when the file has no audio."""
    try:
        return load_audio(src, sample_rate=rate, start_s=start_s, end_s=end_s)
    except NoAudioError:
        return None


def cut_clip(src: str | Path, dst: str | Path, start_s: float, end_s: float, fps: float | None = None) -> Path:
    """Re-encode [start_s, end_s) of `src` with its audio into `dst` (frame-accurate cut)."""
    if end_s <= start_s:
        raise MediaError(src, f"empty time range {start_s:.3f}-{end_s:.3f}s")
    if fps is None:
        from hvbench_assets.core.media.probe import probe_video

        fps = probe_video(src, count_frames=False).fps
    frames = constant_rate(iter_frames(src, start_s=start_s, end_s=end_s), start_s, end_s, fps)
    return write_video(dst, frames, fps=fps, audio=source_audio(src, start_s, end_s))


class ConstantRate:
    """Timestamped frames -> ticks of exactly `fps` from `start_s`: each tick shows the frame on screen
    at that moment. A constant-rate source passes one to one; a variable-rate one (phones) gets frames
    repeated or dropped, so picture and sound stay in sync and every later step may count time as
    frame / fps. Works as frames arrive (the end may be known only later)."""

    def __init__(self, start_s: float, fps: float):
        self.start_s, self.fps = start_s, fps
        self.prev, self.ticks = None, 0

    def push(self, t: float, item) -> list:
        """Ticks completed by a frame at `t` (each the previous frame); `item` is held as the next."""
        out = []
        while self.prev is not None and (self.ticks + 0.5) / self.fps <= t - self.start_s:
            out.append(self.prev)
            self.ticks += 1
        self.prev = item
        return out

    def finish(self, end_s: float) -> list:
        """The remaining ticks up to `end_s` (at least one frame in all)."""
        n_out = max(1, int(round((end_s - self.start_s) * self.fps)))
        out = []
        while self.prev is not None and self.ticks < n_out:
            out.append(self.prev)
            self.ticks += 1
        return out


def constant_rate(frames: Iterable[Frame], start_s: float, end_s: float, fps: float) -> Iterator[np.ndarray]:
    """Frames of [start_s, end_s) resampled by their timestamps to exactly `fps` (see ConstantRate)."""
    ticks = ConstantRate(start_s, fps)
    for f in frames:
        yield from ticks.push(f.t, f.image)
    yield from ticks.finish(end_s)


REORDER = 16  # H.264 holds at most 16 frames for reordering: no packet further on is shown earlier


def copy_packets(src: str | Path, dst: str | Path, start_s: float, end_s: float | None,
                 audio: np.ndarray | None = None, audio_rate: int = AUDIO_RATE) -> Path | None:
    """Copy the video packets shown in [start_s, end_s) of `src` (times on its time line) into `dst`,
    with `audio` encoded beside them: no decoding, no re-encoding. The range must start on a keyframe
    whose group refers to nothing before it; otherwise nothing is written and None is returned (the
    caller re-encodes). It may end anywhere: packets are copied in decode order up to the last one
    shown before `end_s`; those among them shown later (what the last B-frames refer to) stay in the
    file but the video's edit list ends at `end_s`, so readers decode them without showing them."""
    from hvbench_assets.core.media.container import open_media, time_origin
    from hvbench_assets.core.media.mp4 import trim_video_end

    src, dst = Path(src), Path(dst)
    inp = open_media(src)
    tmp = dst.with_name(f".{dst.stem}.{os.getpid()}.copy.tmp.mp4")
    out = None
    try:
        vs = inp.streams.video[0]
        origin = time_origin(inp)
        half = 0.5 / float(vs.average_rate or vs.guessed_rate or 25)
        inp.seek(int((start_s + origin) / vs.time_base), stream=vs, backward=True)
        out = av.open(str(tmp), mode="w", options={"movflags": "+faststart"})
        ovs = out.add_stream_from_template(vs)
        astream = out.add_stream("aac", rate=audio_rate, layout="mono") if audio is not None and len(audio) else None
        shift, later, hidden = None, [], 0  # later: packets past the end, kept until one inside follows
        for pkt in inp.demux(vs):
            if pkt.size == 0 or pkt.pts is None:
                continue
            t = float(pkt.pts * pkt.time_base) - origin
            if shift is None:  # before the first keyframe of the range
                if pkt.is_keyframe and abs(t - start_s) <= half:
                    shift = pkt.pts
                elif t >= start_s + half:
                    return None  # the range does not start on a keyframe
                else:
                    continue
            if t < start_s - half:
                return None  # a packet of this group is shown before the range (open GOP)
            if end_s is not None and t >= end_s - half:
                later.append(pkt)
                if len(later) > REORDER:
                    break
                continue
            hidden += len(later)
            for p in [*later, pkt]:
                p.pts -= shift
                if p.dts is not None:
                    p.dts -= shift
                p.stream = ovs
                out.mux(p)
            later = []
        if shift is None:
            return None
        if astream is not None:
            _encode_audio(out, astream, audio, audio_rate)
        out.close()
        out = None
        if hidden:
            try:
                trim_video_end(tmp, end_s - start_s)
            except MediaError:
                return None  # no edit list to end at the cut: re-encode instead
        os.replace(tmp, dst)
        return dst
    finally:
        if out is not None:
            out.close()
        inp.close()
        tmp.unlink(missing_ok=True)
