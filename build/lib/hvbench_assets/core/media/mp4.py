"""Shortening an mp4's video presentation through its edit list, in place.

A stream copied up to a frame that is not a keyframe may need packets shown after that frame (the
forward references of its last B-frames). They stay in the file, so every frame before the end
decodes; the video track's edit list then ends at the cut, so FFmpeg (and players honouring edit
lists) decode those packets without showing them. FFmpeg's mp4 muxer has no option for the end of
an edit, so the written file's fixed-size duration fields are rewritten in place: the video
track's last edit and header duration, and the movie's duration (the longest track)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

from hvbench_assets.core.media.errors import MediaError

def _boxes(buf: bytearray, start: int, end: int):
    """(type, offset, header size, size) of the boxes in buf[start:end]."""
    off = start
    while off + 8 <= end:
        size, kind = struct.unpack_from(">I4s", buf, off)
        header = 8
        if size == 1:
            size, header = struct.unpack_from(">Q", buf, off + 8)[0], 16
        elif size == 0:
            size = end - off
        if size < header or off + size > end:
            raise ValueError(f"box {kind!r} at {off} overruns its parent")
        yield kind, off, header, size
        off += size


def _child(buf: bytearray, parent: tuple, kind: bytes) -> tuple | None:
    _, off, header, size = parent
    return next((b for b in _boxes(buf, off + header, off + size) if b[0] == kind), None)


def _duration_field(buf: bytearray, box: tuple) -> tuple[int, str]:
    """Offset and struct format of the duration in an mvhd or tkhd box."""
    kind, off, header, _ = box
    body = off + header
    if buf[body] == 1:  # version 1: 64-bit times
        return body + (24 if kind == b"mvhd" else 28), ">Q"
    return body + (16 if kind == b"mvhd" else 20), ">I"


def _top_level(f, size: int):
    """(type, offset, header size, size) of the file's top-level boxes, read header by header."""
    off = 0
    while off + 8 <= size:
        f.seek(off)
        head = f.read(16)
        length, kind = struct.unpack_from(">I4s", head)
        header = 8
        if length == 1:
            length, header = struct.unpack_from(">Q", head, 8)[0], 16
        elif length == 0:
            length = size - off
        if length < header:
            raise ValueError(f"box {kind!r} at {off} is shorter than its header")
        yield kind, off, header, length
        off += length


def trim_video_end(path: str | Path, seconds: float) -> None:
    """Make the video track of `path` (written by FFmpeg's mp4 muxer) show only its first
    `seconds` from the start of its edit. MediaError when it has no single media edit to shorten."""
    path = Path(path)
    try:
        with open(path, "r+b") as f:
            size = path.stat().st_size
            _, at, _, length = next(b for b in _top_level(f, size) if b[0] == b"moov")
            f.seek(at)
            buf = bytearray(f.read(length))
            _patch_moov(buf, seconds)
            f.seek(at)
            f.write(buf)
    except (StopIteration, ValueError, TypeError, struct.error) as exc:
        raise MediaError(path, f"cannot shorten the video's edit list ({exc.__class__.__name__}: {exc})") from exc


def _patch_moov(buf: bytearray, seconds: float) -> None:
    moov = next(_boxes(buf, 0, len(buf)))
    mvhd = _child(buf, moov, b"mvhd")
    pos, fmt = _duration_field(buf, mvhd)
    timescale = struct.unpack_from(">I", buf, pos - 4)[0]
    duration = math.floor(seconds * timescale + 1e-6)  # never past the cut: the next frame stays hidden
    longest, videos = 0, 0
    for trak in (b for b in _boxes(buf, moov[1] + moov[2], moov[1] + moov[3]) if b[0] == b"trak"):
        tkhd, mdia = _child(buf, trak, b"tkhd"), _child(buf, trak, b"mdia")
        hdlr = _child(buf, mdia, b"hdlr")
        t_pos, t_fmt = _duration_field(buf, tkhd)
        if bytes(buf[hdlr[1] + hdlr[2] + 8 : hdlr[1] + hdlr[2] + 12]) != b"vide":
            longest = max(longest, struct.unpack_from(t_fmt, buf, t_pos)[0])
            continue
        videos += 1
        elst = _child(buf, _child(buf, trak, b"edts"), b"elst")
        body = elst[1] + elst[2]
        version, count = buf[body], struct.unpack_from(">I", buf, body + 4)[0]
        entry, d_fmt, m_fmt = (20, ">Q", ">q") if version == 1 else (12, ">I", ">i")
        starts = [body + 8 + i * entry for i in range(count)]  # entries: duration, media time, rate
        media = [struct.unpack_from(m_fmt, buf, e + struct.calcsize(d_fmt))[0] for e in starts]
        real = [i for i, m in enumerate(media) if m != -1]  # -1: an empty edit (a delay)
        if real != [count - 1]:
            raise ValueError(f"the video track's edit list has media edits {real} of {count}")
        delay = sum(struct.unpack_from(d_fmt, buf, e)[0] for e in starts[:-1])
        struct.pack_into(d_fmt, buf, starts[-1], duration)
        struct.pack_into(t_fmt, buf, t_pos, delay + duration)
        longest = max(longest, delay + duration)
    if videos != 1:
        raise ValueError(f"{videos} video tracks")
    struct.pack_into(fmt, buf, pos, longest)
