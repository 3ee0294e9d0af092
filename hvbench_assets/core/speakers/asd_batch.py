"""Light-ASD's multi-window scores computed once per distinct window and in few batched passes.

The reference scores each window length on its own (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6 s) and averages. Here:
- each distinct length (in frames) is computed once and weighted by how often it is listed;
- the encoders (nearly all the cost) run once over each track: their temporal convolutions reach only
  ENCODER_REACH frames either side, so a window's encoding equals the track's except within that reach of
  its edges, which come from short patches (2 x reach frames) encoded on their own, shared by every window
  with that edge;
- the GRU back-end (cheap, but it sees the whole window) runs per window, windows of equal length batched.
The result equals the plain window loop (light_asd.score_with_network) up to float rounding.

`net` is any object with `encode(audio (B, 4T, 13), faces (B, T, 112, 112)) -> (B, T, 128)` and
`head(fused (B, T, 128)) -> (B, T)` on float32 numpy arrays (torch or onnxruntime, see asd_runtime.py)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

ENCODER_REACH = 6  # three blocks of +-2-frame temporal convolutions (the audio side reaches less)
CHUNK = 128  # frames kept per full-track encoder pass (plus the reach each side)


def window_plan(window_s: Sequence[float], fps: float) -> list[tuple[int, int]]:
    """(window length in frames, how often it is listed), as the reference rounds seconds to frames."""
    counts = Counter(max(1, int(round(s * fps))) for s in window_s)
    return sorted(counts.items())


def _run_batched(fn, jobs: dict[tuple, tuple[np.ndarray, ...]], max_frames: int) -> dict[tuple, np.ndarray]:
    """fn over every job's arrays, jobs of equal length stacked into batches of at most max_frames frames."""
    by_len: dict[int, list[tuple]] = defaultdict(list)
    for key, arrays in jobs.items():
        by_len[len(arrays[-1])].append(key)
    out: dict[tuple, np.ndarray] = {}
    for length, keys in by_len.items():
        step = max(1, max_frames // max(1, length))
        for k in range(0, len(keys), step):
            batch = keys[k : k + step]
            res = fn(*(np.stack([jobs[key][j] for key in batch]) for j in range(len(jobs[batch[0]]))))
            out.update(zip(batch, res))
    return out


def multi_window_scores(net, tracks: Sequence[tuple[np.ndarray, np.ndarray]], fps: float,
                        window_s: Sequence[float], max_frames: int = 160) -> list[np.ndarray]:
    """Per-frame scores (T,) of each (faces (T, 112, 112), mfcc (4T, 13)) track: the weighted mean over the
    window lengths of the class-1 logit, rounded to 4 decimals like the reference loop."""
    r = ENCODER_REACH
    plan = window_plan(window_s, fps)

    def enc_job(i: int, a: int, b: int):
        faces, feats = tracks[i]
        return feats[4 * a : 4 * b].astype(np.float32), faces[a:b].astype(np.float32)

    # 1. encoder jobs: full-track chunks, then window edges not already right in the full pass
    jobs: dict[tuple, tuple] = {}
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        for c0 in range(0, n, CHUNK):
            jobs[("chunk", i, max(0, c0 - r), min(n, c0 + CHUNK + r))] = enc_job(i, max(0, c0 - r), min(n, c0 + CHUNK + r))
        for win, _ in plan:
            for a in range(0, n, win):
                b = min(n, a + win)
                if b - a <= 2 * r:
                    jobs[("whole", i, a, b)] = enc_job(i, a, b)
                    continue
                if a > 0:
                    jobs[("edge", i, a, a + 2 * r)] = enc_job(i, a, a + 2 * r)
                if b < n:
                    jobs[("edge", i, b - 2 * r, b)] = enc_job(i, b - 2 * r, b)
    enc = _run_batched(net.encode, jobs, max_frames)
    full = []
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        f = np.zeros((n, 128), np.float32)
        for c0 in range(0, n, CHUNK):
            lo, hi = max(0, c0 - r), min(n, c0 + CHUNK + r)
            c1 = min(n, c0 + CHUNK)
            f[c0:c1] = enc[("chunk", i, lo, hi)][c0 - lo : c1 - lo]
        full.append(f)

    # 2. each window's encoding, then the back-end over windows of equal length together
    heads: dict[tuple, tuple] = {}
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        for win, _ in plan:
            for a in range(0, n, win):
                b = min(n, a + win)
                if b - a <= 2 * r:
                    fused = enc[("whole", i, a, b)]
                else:
                    fused = full[i][a:b].copy()
                    if a > 0:
                        fused[:r] = enc[("edge", i, a, a + 2 * r)][:r]
                    if b < n:
                        fused[-r:] = enc[("edge", i, b - 2 * r, b)][-r:]
                heads[(win, i, a)] = (fused,)
    logits = _run_batched(net.head, heads, max_frames * 16)
    total = sum(w for _, w in plan)
    out = []
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        acc = np.zeros(n, np.float64)
        for win, weight in plan:
            for a in range(0, n, win):
                acc[a : min(n, a + win)] += weight * logits[(win, i, a)]
        out.append(np.round(acc / total, 4).astype(np.float32))
    return out
