"""Repeatability of the H.264 encodes: the same frames encoded N times, with the pipeline's settings
(core/media/encode.py: REPEATABLE_X264, no MB-tree) and with x264's defaults (MB-tree on), each plainly
(`write_video`: cut clips, question videos) and on a one-second keyframe grid (scene_clips' shots).
The encodes of all cases take turns, as in a pipeline. Prints per source and way: distinct coded pictures over
N encodes (1 = repeatable), and the settings' wall, CPU and file size as ratios to the defaults measured in the
same process.

Input: the first 200 frames of each shared clip (../shared/videos), else a generated two-person sample.

Run: .venv/bin/python benchmarks/encodes.py [--repeat 12]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import av  # noqa: E402

from hvbench_assets.core.media import iter_frames  # noqa: E402
from hvbench_assets.core.media import encode  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"


def sources() -> dict[str, list]:
    clips = sorted(SHARED.glob("*.mp4")) if SHARED.is_dir() else []
    if clips:
        return {p.stem: [f.image.copy() for f in iter_frames(p)][:200] for p in clips}
    from hvbench_assets.demo.main import _speech
    from hvbench_assets.demo.samples import two_people_talking

    frames = two_people_talking(8.0, _speech("Hello there, this is a generated sample.", 8.0))
    if frames is None:
        sys.exit("no ../shared/videos and no scikit-image (the `demo` extra) for a generated sample")
    return {"generated two_people_talking": list(frames)}


def pictures(path: Path) -> str:
    with av.open(str(path)) as c:
        return hashlib.md5(b"".join(bytes(p) for p in c.demux(video=0))).hexdigest()


def encode_once(frames, gop: int | None, path: Path) -> tuple[str, float, float, int]:
    """(coded pictures' hash, wall s, CPU s, bytes)."""
    t, c = time.perf_counter(), time.process_time()
    enc = encode.VideoEncoder(path, 25, gop=gop)
    for f in frames:
        enc.push(f)
    enc.close()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return pictures(path), wall, cpu, path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=12)
    args = ap.parse_args()
    ours = encode.REPEATABLE_X264
    cases = [(name, way, gop, frames) for name, frames in sources().items()
             for way, gop in (("plain", None), ("grid", 25))]
    runs: dict[tuple, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # round-robin over the cases, as a pipeline interleaves its encodes: what x264 left in freed memory
        # differs from one encode to the next
        for i in range(args.repeat):
            for name, way, gop, frames in cases:
                for setting in ("mbtree=1", ours):  # x264's default, then ours
                    encode.REPEATABLE_X264 = setting
                    runs.setdefault((name, way, setting), []).append(encode_once(frames, gop, Path(tmp) / "e.mp4"))
        encode.REPEATABLE_X264 = ours
    print(f"{'source':24s} {'way':6s} distinct: defaults / ours   ours ÷ defaults: wall  CPU   size")
    for name, way, _, _ in cases:
        base, mine = runs[(name, way, "mbtree=1")], runs[(name, way, ours)]
        distinct = [len({r[0] for r in x}) for x in (base, mine)]
        ratio = [sum(r[k] for r in mine) / sum(r[k] for r in base) for k in (1, 2, 3)]
        print(f"{name:24s} {way:6s} {distinct[0]:>10d} / {distinct[1]:<4d} {'':14s} "
              + " ".join(f"{x:5.2f}" for x in ratio))
    print(f"{args.repeat} encodes of each; the pipeline's setting: {ours!r}")

if __name__ == "__main__":
    main()
