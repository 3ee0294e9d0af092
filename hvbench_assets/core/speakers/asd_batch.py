"""Light-ASD's multi-window scores computed once per distinct window and in few batched passes.

The reference scores each window length on its own (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6 s) and averages. Here:
- each distinct length (in frames) is computed once and weighted by how often it is listed;
- the encoders (nearly all the cost) run once over each track: their temporal convolutions reach only
  ENCODER_REACH frames either side, so a window's encoding equals the track's except within that reach of
  its edges, which come from short patches (2 x reach frames) encoded on their own, shared by every window
  with that edge;
- the GRU back-end (cheap, but it sees the whole window) runs per window, windows of equal length batched.
The result equals the plain window loop (light_asd.score_with_network) up to float rounding. A net that also runs
the visual encoder in stages (`full`, asd_stages.py; both runtimes do) re-encodes only the frames each edge changes,
block by block, instead of the visual side of the patches (0.78x the network's time on the 8 short clips' tracks).

`net` is any object with `encode(audio (B, 4T, 13), faces (B, T, 112, 112)) -> (B, T, 128)` and
`head(fused (B, T, 128)) -> (B, T)` on float32 numpy arrays (torch or onnxruntime, see asd_runtime.py)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

ENCODER_REACH = 6  # three blocks of +-2-frame temporal convolutions (the audio side reaches less)
CHUNK = 128  # frames kept per full-track encoder pass (plus the reach each side; the staged pass holds its
# blocks 2 and 3's spatial outputs of a chunk meanwhile, 0.6 MB a frame)


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


def _windows(tracks, plan) -> list[tuple[int, int, int, int]]:
    """(window length, track, start, end) of every window of every listed length."""
    return [(win, i, a, min(len(faces), a + win)) for i, (faces, _) in enumerate(tracks) for win, _ in plan
            for a in range(0, len(faces), win)]


def _patch_jobs(tracks, windows, r: int, job) -> dict[tuple, tuple]:
    """`job(i, a, b)` (a track's frames a..b as the encoder's inputs) for each track's chunks, each window edge's
    12-frame patch and each window too short for edges."""
    jobs: dict[tuple, tuple] = {}
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        for c0 in range(0, n, CHUNK):
            jobs[("chunk", i, max(0, c0 - r), min(n, c0 + CHUNK + r))] = job(i, max(0, c0 - r), min(n, c0 + CHUNK + r))
    for _, i, a, b in windows:
        if b - a <= 2 * r:
            jobs[("whole", i, a, b)] = job(i, a, b)
            continue
        if a > 0:
            jobs[("edge", i, a, a + 2 * r)] = job(i, a, a + 2 * r)
        if b < len(tracks[i][0]):
            jobs[("edge", i, b - 2 * r, b)] = job(i, b - 2 * r, b)
    return jobs


def _patched_windows(net, tracks, plan, max_frames: int, lags: Sequence[int] = (0,)) -> dict[tuple, np.ndarray]:
    """Each window's encoding: the whole track's, with each edge's reach (the net's `reach`, else ENCODER_REACH)
    from a 2 x reach patch encoded on its own (any net with `encode`); per lag the encoding again, the audio
    shifted. A net with the encoders apart (`visual`, `audio`, `join`) encodes the faces once for every lag."""
    r = getattr(net, "reach", ENCODER_REACH)
    windows = _windows(tracks, plan)
    split = all(hasattr(net, k) for k in ("visual", "audio", "join"))
    if split:
        seen = _run_batched(net.visual, _patch_jobs(tracks, windows, r, lambda i, a, b: (
            tracks[i][0][a:b].astype(np.float32),)), max_frames)
    out = {}
    for lag in lags:
        mfcc = [np.roll(m, 4 * lag, axis=0) if lag else m for _, m in tracks]
        if split:
            heard = _run_batched(net.audio, _patch_jobs(tracks, windows, r, lambda i, a, b: (
                mfcc[i][4 * a : 4 * b].astype(np.float32),)), 4 * max_frames)
            enc = {k: net.join(heard[k], v) for k, v in seen.items()}
        else:
            enc = _run_batched(net.encode, _patch_jobs(tracks, windows, r, lambda i, a, b: (
                mfcc[i][4 * a : 4 * b].astype(np.float32), tracks[i][0][a:b].astype(np.float32))), max_frames)
        full = [_assemble(enc, i, len(faces), r) for i, (faces, _) in enumerate(tracks)]
        out.update({(lag, win, i, a): _edged(full[i], enc, i, a, b, r) for win, i, a, b in windows})
    return out


def _staged_windows(net, tracks, plan, max_frames: int, lags: Sequence[int] = (0,)) -> dict[tuple, np.ndarray]:
    """The same encodings, the visual side's edges re-encoded only where they change (asd_stages.py); the audio
    encoder (a few percent of the cost) keeps the 12-frame patches. Per lag in `lags` (frames): the same visual
    encoding beside the audio shifted by the lag (the fusion adds the two), keyed (lag, window, track, start)."""
    from hvbench_assets.core.speakers.asd_stages import visual_edges

    r = ENCODER_REACH
    windows = _windows(tracks, plan)
    lefts = {(i, a) for _, i, a, b in windows if b - a > 2 * r and a > 0}
    rights = {(i, b) for _, i, a, b in windows if b - a > 2 * r and b < len(tracks[i][0])}
    visual, left, right = visual_edges(net, [faces for faces, _ in tracks], CHUNK, r, lefts, rights)
    short = {(i, a, b) for _, i, a, b in windows if b - a <= 2 * r}
    shown = _run_batched(lambda f: net.full(f)[0], {k: (tracks[k[0]][0][k[1] : k[2]].astype(np.float32),) for k in short},
                         max_frames)
    out = {}
    for lag in lags:
        mfcc = [np.roll(m, 4 * lag, axis=0) if lag else m for _, m in tracks]
        audio = _run_batched(net.audio, _patch_jobs(tracks, windows, r, lambda i, a, b: (
            mfcc[i][4 * a : 4 * b].astype(np.float32),)), 4 * max_frames)
        full = [_assemble(audio, i, len(faces), r) for i, (faces, _) in enumerate(tracks)]
        for win, i, a, b in windows:
            if b - a <= 2 * r:
                out[(lag, win, i, a)] = audio[("whole", i, a, b)] + shown[(i, a, b)]
                continue
            v = visual[i][a:b].copy()
            if a > 0:
                v[:r] = left[(i, a)]
            if b < len(tracks[i][0]):
                v[-r:] = right[(i, b)]
            out[(lag, win, i, a)] = _edged(full[i], audio, i, a, b, r) + v
    return out


def _assemble(enc: dict, i: int, n: int, r: int) -> np.ndarray:
    """Track i's whole encoding (n, 128) from its chunks' interiors."""
    f = None
    for c0 in range(0, n, CHUNK):
        lo, hi = max(0, c0 - r), min(n, c0 + CHUNK + r)
        c1 = min(n, c0 + CHUNK)
        piece = enc[("chunk", i, lo, hi)]
        if f is None:
            f = np.zeros((n, piece.shape[-1]), np.float32)
        f[c0:c1] = piece[c0 - lo : c1 - lo]
    return f if f is not None else np.zeros((0, 128), np.float32)


def _edged(full: np.ndarray, enc: dict, i: int, a: int, b: int, r: int) -> np.ndarray:
    """Window a..b of a track's encoding, its edges' reach from their patches (the whole window when short)."""
    if b - a <= 2 * r:
        return enc[("whole", i, a, b)]
    fused = full[a:b].copy()
    if a > 0:
        fused[:r] = enc[("edge", i, a, a + 2 * r)][:r]
    if b < len(full):
        fused[-r:] = enc[("edge", i, b - 2 * r, b)][-r:]
    return fused


def multi_window_scores(net, tracks: Sequence[tuple[np.ndarray, np.ndarray]], fps: float,
                        window_s: Sequence[float], max_frames: int = 160) -> list[np.ndarray]:
    """Per-frame scores (T,) of each (faces (T, 112, 112), mfcc (4T, 13)) track: the weighted mean over the
    window lengths of the class-1 logit, rounded to 4 decimals like the reference loop. A net with the visual
    encoder in stages (`full`, asd_stages.py) re-encodes only what a window's edges change."""
    return [s[0] for s in lagged_window_scores(net, tracks, fps, window_s, (0,), max_frames)]


def lagged_window_scores(net, tracks: Sequence[tuple[np.ndarray, np.ndarray]], fps: float, window_s: Sequence[float],
                         lags: Sequence[int], max_frames: int = 160) -> list[np.ndarray]:
    """`multi_window_scores` with the sound shifted (circularly, within each track) by each lag in frames: per track
    an array (len(lags), T). The visual encoder, nearly all the cost, runs once for every lag."""
    plan = window_plan(window_s, fps)
    windows = (_staged_windows if hasattr(net, "full") else _patched_windows)(net, tracks, plan, max_frames, tuple(lags))
    # the back-end over windows of equal length together
    logits = _run_batched(net.head, {k: (v,) for k, v in windows.items()}, max_frames * 16)
    total = sum(w for _, w in plan)
    out = []
    for i, (faces, _) in enumerate(tracks):
        n = len(faces)
        acc = np.zeros((len(lags), n), np.float64)
        for k, lag in enumerate(lags):
            for win, weight in plan:
                for a in range(0, n, win):
                    acc[k, a : min(n, a + win)] += weight * logits[(lag, win, i, a)]
        out.append(np.round(acc / total, 4).astype(np.float32))
    return out
