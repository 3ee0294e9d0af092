"""Light-ASD scoring speed: the reference's plain window loop against the batched scorer (asd_batch.py), in
torch and in onnxruntime, and in onnxruntime the staged window edges (asd_stages.py, the default) against the
12-frame edge patches they replaced, on the same face crops in one process. Prints track-seconds scored per second.

Run: PYTHONPATH=. .venv/bin/python benchmarks/light_asd_speed.py [seconds=4] [tracks=2]

Input: the man of ../shared/videos/man_talking_head.mp4 (a fixed crop around his face, 25 fps) under his own
voice, `seconds` long, scored as `tracks` tracks of one clip (the batched scorer stacks them into shared
passes; the loop goes track by track). Windows: the default 1,1,1,2,2,2,3,3,4,5,6 s."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hvbench_assets.core.media import SAMPLE_RATE, iter_frames, load_audio  # noqa: E402
from hvbench_assets.core.speakers.asd_batch import multi_window_scores  # noqa: E402
from hvbench_assets.core.speakers.asd_runtime import WINDOWS_S, LightAsdScorer, OnnxLightAsdScorer  # noqa: E402
from hvbench_assets.core.speakers.light_asd import prepare_faces, score_with_network  # noqa: E402
from hvbench_assets.core.speakers.mfcc import mfcc_per_video_frame  # noqa: E402

CLIP = ROOT.parent / "shared" / "videos" / "man_talking_head.mp4"


def plain_loop(net, faces: np.ndarray, audio: np.ndarray, fps: float, window_s) -> np.ndarray:
    """The reference loop (every listed window, one window per pass) over an encode/head pair (onnxruntime)."""
    n = len(faces)
    feats = mfcc_per_video_frame(audio, n, fps)
    per_window = []
    for seconds in window_s:
        win = max(1, int(round(seconds * fps)))
        out = np.zeros(n, np.float32)
        for a in range(0, n, win):
            b = min(n, a + win)
            out[a:b] = net.head(net.encode(feats[None, 4 * a : 4 * b], faces[None, a:b].astype(np.float32)))[0]
        per_window.append(out)
    return np.round(np.mean(per_window, axis=0), 4).astype(np.float32)


class _Halves:
    """Only the network's two halves: asd_batch.py then re-encodes each window edge from a 12-frame patch."""

    def __init__(self, net):
        self.encode, self.head = net.encode, net.head


def main(args: list[str]) -> None:
    seconds = float(args[0]) if args else 4.0
    n_tracks = int(args[1]) if len(args) > 1 else 2
    fps = 25.0
    n = int(seconds * fps)
    frames = [f.image[80:620, 150:690] for _, f in zip(range(n), iter_frames(CLIP))]
    faces = prepare_faces(frames)
    audio = load_audio(CLIP)[: int(n / fps * SAMPLE_RATE)]
    tracks = [(faces, audio)] * n_tracks
    torch_scorer, onnx_scorer = LightAsdScorer(device="auto"), OnnxLightAsdScorer(device="auto")
    torch_net, onnx_net = torch_scorer.load(), onnx_scorer.load()
    runs = {
        f"torch plain loop ({torch_net.device})": lambda: [score_with_network(torch_net.net, f, a, fps, WINDOWS_S, torch_net.device) for f, a in tracks],
        f"torch batched ({torch_net.device})": lambda: torch_scorer.score_prepared(tracks, fps),
        f"onnx plain loop ({onnx_net.device})": lambda: [plain_loop(onnx_net, f, a, fps, WINDOWS_S) for f, a in tracks],
        f"onnx batched ({onnx_net.device})": lambda: onnx_scorer.score_prepared(tracks, fps),
        # the batched scorer with each window edge re-encoded from a 12-frame patch (before asd_stages.py)
        f"onnx patched edges ({onnx_net.device})": lambda: multi_window_scores(
            _Halves(onnx_net), [(f, mfcc_per_video_frame(a, len(f), fps)) for f, a in tracks], fps, WINDOWS_S),
    }
    track_seconds = n_tracks * n / fps
    print(f"{n_tracks} tracks x {n} frames ({track_seconds:.0f} track-seconds), windows {WINDOWS_S}")
    results, speed = {}, {}
    for name, fn in runs.items():
        t0 = time.perf_counter()
        results[name] = fn()
        dt = time.perf_counter() - t0
        speed[name] = track_seconds / dt
        print(f"{name:28} {dt:7.1f} s  {speed[name]:6.2f} track-s/s")
    ref = results[next(iter(runs))]
    for name, res in results.items():
        diff = max(float(np.abs(r - q).max()) for r, q in zip(ref, res))
        print(f"max |score - torch plain loop| {name:28} {diff:.1e}")
    names = list(runs)
    print(f"speed-up torch: batched / plain loop = {speed[names[1]] / speed[names[0]]:.1f}x; "
          f"onnx: {speed[names[3]] / speed[names[2]]:.1f}x; onnx batched / torch plain loop = {speed[names[3]] / speed[names[0]]:.1f}x; "
          f"onnx staged edges / patched edges = {speed[names[3]] / speed[names[4]]:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
