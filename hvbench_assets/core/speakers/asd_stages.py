"""Light-ASD's window edges re-encoded from the frames they change, block by block (asd_batch.py's faster path).

A window's encoding equals the whole track's except near its edges, where the temporal convolutions see zeros
beyond the window: after block 1 the two frames next to an edge differ, after block 2 four, after block 3 six
(each block's temporal convolutions reach +-2 frames). Re-encoding a 12-frame patch per edge side computed every
block on all 12 frames (2.4 GMAC); here only what differs is computed, from the whole-track pass's block-2 and
block-3 spatial outputs next to the edge (kept from that pass): block 1 on 4 frames, block 2's spatial part on 2
and temporal part on 4, block 3's spatial part on 4 and temporal part on 6 (about 0.7 GMAC). The audio encoder
(a few percent of the cost) keeps the 12-frame patches.

`net` is any object with, on float32 numpy arrays (torch or onnxruntime, asd_runtime.py):
  full(faces (B, T, 112, 112)) -> (visual (B, T, 128), s2 pair (B, 64, T, 28, 28), s3 pair (B, 128, T, 14, 14))
  block1(faces (B, T, 112, 112)) -> block 2's input (B, 32, T, 28, 28)
  spatial(i, x) -> (s3, s5) of block i (2 or 3);  temporal(i, s3, s5) -> block i + 1's input, or visual for i = 3
  audio(mfcc (B, 4T, 13)) -> (B, T, 128);  head(fused (B, T, 128)) -> (B, T)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

REACH = (2, 4, 6)  # frames next to an edge whose values differ after blocks 1, 2 and 3
EDGES_PER_CALL = 16


def _batched(fn, items: list, per_call: int) -> list:
    """fn over stacked items (each a tuple of arrays of equal shapes), per_call at a time; per-item results."""
    out = []
    for k in range(0, len(items), per_call):
        chunk = items[k : k + per_call]
        res = fn(*(np.stack([it[j] for it in chunk]) for j in range(len(chunk[0]))))
        res = res if isinstance(res, tuple) else (res,)
        out += [tuple(r[m] for r in res) for m in range(len(chunk))]
    return out


def visual_edges(net, tracks: Sequence[np.ndarray], chunk: int, reach: int,
                 lefts: set[tuple[int, int]], rights: set[tuple[int, int]]):
    """Visual features of each whole track (n, 128), and of each window edge: a window starting at frame a of
    track i (lefts) gets frames a..a+5 from left[(i, a)], one ending before frame b (rights) frames b-6..b-1 from
    right[(i, b)]. Each edge lies at least 12 frames from the window's other edge."""
    r1 = REACH[0]
    # per block 2 and 3: the whole pass's spatial outputs its temporal part reads next to an edge, besides the frames
    # the block before changed (reach ... reach + 2 frames after block i-1's reach; mirrored at a right edge)
    spans = {blk: (REACH[blk - 2], REACH[blk - 1] + 2) for blk in (2, 3)}

    def kept_frames(blk: int, edge: int, left: bool) -> range:
        lo, hi = spans[blk]
        return range(edge + lo, edge + hi) if left else range(edge - hi, edge - lo)

    need = {blk: {(i, f) for i, a in lefts for f in kept_frames(blk, a, True)}
            | {(i, f) for i, b in rights for f in kept_frames(blk, b, False)} for blk in (2, 3)}
    kept: dict[int, dict] = {2: {}, 3: {}}
    whole = []
    for i, faces in enumerate(tracks):
        n = len(faces)
        v = np.zeros((n, 128), np.float32)
        for c0 in range(0, n, chunk):  # interior c0..c1 of a pass over lo..hi (the reach beyond it is context)
            lo, hi, c1 = max(0, c0 - reach), min(n, c0 + chunk + reach), min(n, c0 + chunk)
            vis, *pairs = (x[0] for x in net.full(faces[None, lo:hi].astype(np.float32)))
            v[c0:c1] = vis[c0 - lo : c1 - lo]
            for blk, (sa, sb) in zip((2, 3), (pairs[:2], pairs[2:])):
                for f in range(c0, c1):
                    if (i, f) in need[blk]:
                        kept[blk][(i, f)] = (sa[:, f - lo], sb[:, f - lo])
        whole.append(v)

    def side(edges: list[tuple[int, int]], left: bool) -> dict:
        if not edges:
            return {}

        def changed(items, r: int, axis: int):  # the r frames next to the edge (frame axis 1 of 5-D, 0 of visual)
            cut = slice(0, r) if left else slice(-r, None)
            return [o[0][(slice(None),) * axis + (cut,)] for o in items]

        # block 1 on the 4 frames next to the edge, keeping the 2 it changes
        x1 = [(tracks[i][a : a + 2 * r1] if left else tracks[i][a - 2 * r1 : a]).astype(np.float32) for i, a in edges]
        x = changed(_batched(net.block1, [(f,) for f in x1], EDGES_PER_CALL), r1, 1)
        # blocks 2 and 3: spatial part on the changed frames, temporal part on them beside the whole pass's kept ones
        for blk in (2, 3):
            s = _batched(lambda y, blk=blk: net.spatial(blk, y), [(y,) for y in x], EDGES_PER_CALL)
            own = [[kept[blk][(i, f)] for f in kept_frames(blk, a, left)] for i, a in edges]
            pairs = [tuple(np.concatenate(([new[k]] if left else []) + [o[k][:, None] for o in mine]
                                          + ([] if left else [new[k]]), axis=1) for k in (0, 1))
                     for new, mine in zip(s, own)]
            out = _batched(lambda p, q, blk=blk: net.temporal(blk, p, q), pairs, EDGES_PER_CALL)
            x = changed(out, REACH[blk - 1], 1 if blk == 2 else 0)
        return dict(zip(edges, x))

    return whole, side(sorted(lefts), True), side(sorted(rights), False)
