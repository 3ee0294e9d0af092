"""An H.264 test video whose every frame shows its own index (`stamped_source`) and the reader of those indices
(`frame_ids`): which frames a copy or a cut kept, exactly. Used by the media and split tests and benchmarks/decodes.py."""

from fractions import Fraction

import av
import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.media.encode import AUDIO_RATE

BITS, BLOCK = 9, 16


def stamped_source(path, n: int = 150, fps: int = 25, cuts=(53, 104), keyint: int = 250, bframes: int = 3,
                   pyramid: str = "normal", size=(320, 240), audio: bool = True):
    """H.264 whose every frame shows its own index in binary blocks along the top, shots changing
    colour at `cuts`, keyframes every `keyint` frames only (x264, no scene-cut keyframes)."""
    w, h = size
    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=fps)
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    vs.options = {"preset": "veryfast", "x264-params":
                  f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes={bframes}:b-pyramid={pyramid}"}
    astream = out.add_stream("aac", rate=AUDIO_RATE, layout="mono") if audio else None
    colours = ((200, 40, 40), (20, 230, 230), (128, 128, 128), (40, 160, 40))
    for i in range(n):
        img = np.full((h, w, 3), colours[sum(i >= c for c in cuts) % len(colours)], np.uint8)
        img[100:140, (i * 6) % (w - 40) : (i * 6) % (w - 40) + 40] = 255
        for b in range(BITS):
            img[:BLOCK, b * BLOCK : (b + 1) * BLOCK] = 255 if (i >> b) & 1 else 0
        frame = av.VideoFrame.from_ndarray(img, format="bgr24")
        frame.pts, frame.time_base = i, Fraction(1, fps)
        out.mux(vs.encode(frame))
    out.mux(vs.encode(None))
    if astream is not None:
        t = np.arange(int(n / fps * AUDIO_RATE)) / AUDIO_RATE
        samples = (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)
        for k in range(0, len(samples), 1024):
            af = av.AudioFrame.from_ndarray(samples[k : k + 1024].reshape(1, -1), format="fltp", layout="mono")
            af.sample_rate, af.pts = AUDIO_RATE, k
            out.mux(astream.encode(af))
        out.mux(astream.encode(None))
    out.close()
    return path


def frame_ids(path) -> list[int]:
    """The index stamped on every frame a reader is shown."""
    return [sum(1 << b for b in range(BITS) if f.image[2 : BLOCK - 2, b * BLOCK + 2 : (b + 1) * BLOCK - 2].mean() > 128)
            for f in iter_frames(path)]
