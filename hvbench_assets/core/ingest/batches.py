"""Which new clips the clip sensor labels together in one run (runtime/batch.py runs a key range of clips)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def clip_batches(order: Sequence[str], pending: Mapping[str, float], max_clips: int,
                 short_s: float) -> list[list[str]]:
    """Runs of the pending clips: short ones (duration <= `short_s`) that follow each other in the partitions'
    `order` (a run covers a key range, so a clip not pending between them ends the batch), at most `max_clips`
    per run; every other pending clip alone. `pending`: clip -> duration in seconds."""
    out: list[list[str]] = []
    batch: list[str] = []
    for key in order:
        if key in pending and pending[key] <= short_s and max_clips > 1:
            batch.append(key)
            if len(batch) == max_clips:
                out.append(batch)
                batch = []
            continue
        if batch:
            out.append(batch)
            batch = []
        if key in pending:
            out.append([key])
    if batch:
        out.append(batch)
    return out
