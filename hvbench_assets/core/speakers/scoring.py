"""L7 rows for a clip: scores from a backend, the run rule and the veto (no Dagster here).

A backend first `prepare`s each track from its streamed face-crop frames (small per-frame features, never
the pixels of the whole track), then scores all tracks of the clip together, so the offline backend can
compare the faces seen at the same moment."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE, MediaError
from hvbench_assets.core.speakers import rules
from hvbench_assets.core.speakers.lipsync import PlacedSignals


class SpeakerScorer(Protocol):
    backend: str
    model: str

    def prepare(self, frames_bgr: Iterable[np.ndarray], audio: np.ndarray, fps: float) -> Any: ...

    def score_placed(self, tracks: Sequence[PlacedSignals], fps: float) -> list[np.ndarray]: ...


@dataclass(frozen=True)
class TrackFrames:
    """A track to score: its id, first clip frame, length, and a way to stream its face-crop frames."""

    track_id: int
    first_frame: int
    n_frames: int
    frames: Callable[[], Iterable[np.ndarray]]

    def __iter__(self) -> Iterator[np.ndarray]:
        """Its frames, streamed anew on every pass (a scorer may take a second look: combined.py)."""
        return iter(self.frames())


MIN_FACE_PX = 40  # a track's median face side (source pixels) below which its lips are not judged: the mouth would
# span about a dozen pixels, and a speaker's lips cannot be told from a mouthing face's there


def too_small(face_size_median: float | None, min_px: float = MIN_FACE_PX) -> str | None:
    """Why a track's face is too small to judge who speaks, or None."""
    if face_size_median is None or face_size_median >= min_px:
        return None
    return f"face {face_size_median:.0f} px (median side) < {min_px:g} px: too small to judge its lips"


def track_audio(clip_audio: np.ndarray, first_frame: int, n_frames: int, fps: float) -> np.ndarray:
    """The clip's 16 kHz audio under a track's frames, starting at its first frame's real time."""
    a = int(round(first_frame / fps * SAMPLE_RATE))
    b = int(round((first_frame + n_frames) / fps * SAMPLE_RATE))
    seg = clip_audio[a:b]
    return np.pad(seg, (0, max(0, b - a - len(seg))))


def _row(scores: np.ndarray, fps: float, first_frame: int, min_run: int, voice, face, veto_min_confidence) -> dict:
    summary = rules.summarise(scores, min_run)
    veto_reason = rules.veto(voice, face, veto_min_confidence) if summary["raw_speaking"] else None
    return {
        "status": "ok", "reason": None, "fps": fps, "first_frame": first_frame, "n_frames": len(scores),
        "scores": [float(s) for s in scores], **summary, "min_run": min_run,
        "speaking": bool(summary["raw_speaking"] and veto_reason is None), "veto_reason": veto_reason,
        "voice_class": voice.label if voice else None, "face_class": face.label if face else None,
    }


def clip_scores(scorer: SpeakerScorer, tracks: Sequence[TrackFrames], clip_audio: np.ndarray, fps: float) -> list[dict]:
    """Per-frame scores of every track, in the given order (the costly part of L7: no rule, no veto yet). A track
    whose crop clip cannot be read gets a `failed` row and is left out of the comparison; the others are still
    scored."""
    prepared: list[tuple[int, PlacedSignals]] = []
    failed: dict[int, dict] = {}
    for i, tr in enumerate(tracks):
        try:
            sig = scorer.prepare(tr, track_audio(clip_audio, tr.first_frame, tr.n_frames, fps), fps)
        except MediaError as exc:
            failed[i] = {"status": "failed", "reason": str(exc), "fps": fps, "first_frame": tr.first_frame}
            continue
        prepared.append((i, PlacedSignals(tr.first_frame, sig)))
    scores = scorer.score_placed([p for _, p in prepared], fps) if prepared else []
    by_index = {i: s for (i, _), s in zip(prepared, scores)}
    # read after scoring: a method whose network failed to load has fallen back by now (methods.py)
    method = {"method": getattr(scorer, "method", None), "method_note": getattr(scorer, "method_note", None)}
    return [{**(failed.get(i) or {"status": "ok", "reason": None, "fps": fps, "first_frame": tr.first_frame,
                                  "n_frames": len(by_index[i]), "scores": [float(s) for s in by_index[i]]}),
             **method, "track_id": tr.track_id} for i, tr in enumerate(tracks)]


def verdict_rows(
    score_rows: Sequence[dict], min_run: int = rules.DEFAULT_MIN_RUN, voice: rules.PersonClass | None = None,
    faces: dict[int, rules.PersonClass | None] | None = None, veto_min_confidence: float = 0.7,
) -> list[dict]:
    """L7 rows from `clip_scores` rows: the longest positive run against `min_run`, then the voice/face veto. A
    row that is not `ok` (failed, or a clip-level status) is kept and does not speak."""
    faces = faces or {}
    out = []
    for r in score_rows:
        keep = {k: r.get(k) for k in ("track_id", "method", "method_note")}
        if r.get("status") != "ok":
            out.append({**r, "speaking": False})
            continue
        row = _row(np.asarray(r["scores"], dtype=float), r["fps"], r["first_frame"], min_run, voice,
                   faces.get(r["track_id"]), veto_min_confidence)
        out.append({**row, **keep})
    return out


def clip_rows(
    scorer: SpeakerScorer, tracks: Sequence[TrackFrames], clip_audio: np.ndarray, fps: float,
    min_run: int = rules.DEFAULT_MIN_RUN, voice: rules.PersonClass | None = None,
    faces: dict[int, rules.PersonClass | None] | None = None, veto_min_confidence: float = 0.7,
) -> list[dict]:
    """One L7 row per track, in the given order: `clip_scores`, then `verdict_rows`."""
    return verdict_rows(clip_scores(scorer, tracks, clip_audio, fps), min_run, voice, faces, veto_min_confidence)


def track_row(
    scorer: SpeakerScorer, frames_bgr, clip_audio: np.ndarray, fps: float, first_frame: int,
    min_run: int = rules.DEFAULT_MIN_RUN, voice: rules.PersonClass | None = None,
    face: rules.PersonClass | None = None, veto_min_confidence: float = 0.7,
) -> dict:
    """One track on its own (no other face to compare with)."""
    frames = list(frames_bgr) if not isinstance(frames_bgr, list) else frames_bgr
    row = clip_rows(scorer, [TrackFrames(-1, first_frame, len(frames), lambda: iter(frames))], clip_audio, fps,
                    min_run, voice, {-1: face}, veto_min_confidence)[0]
    row.pop("track_id")
    return row
