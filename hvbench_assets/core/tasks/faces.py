"""The face gate: families whose truth comes from a face (L5 emotions, L3 face class, a face to describe or
to compare) use a track only when the face detector found its face on enough of the frames it looked at.
Boxes between detections are interpolated, and a body-only track's face box is estimated: neither is a face
anyone saw. The thresholds are `family.FACE_GATE`; `gate_tracks` is called once per family
before its selection rule, so every rule picks among faced tracks only."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict
from hvbench_assets.core.vision.tables import Track


@dataclass(frozen=True)
class FaceGate:
    min_detected_share: float  # detected frames / the detection frames of the track's span (at least)
    min_detected_frames: int  # and at least this many detected frames


def detection_step(labels: ClipLabels, track: Track) -> int:
    """Every how many frames L1 ran the face detector (its stored detect_fps); 1 when unknown."""
    row = next((r for r in labels.rows.get("human_tracks") or [] if r.get("track_id") == track.track_id), {})
    params = row.get("params") or {}
    if isinstance(params, str):
        params = json.loads(params)
    detect_fps = params.get("detect_fps")
    return max(1, round(track.fps / detect_fps)) if detect_fps and track.fps else 1


def face_evidence(labels: ClipLabels, track: Track) -> tuple[int, int]:
    """(frames whose face box the detector found, detection frames within the track's span)."""
    step = detection_step(labels, track)
    looked = sum(1 for f in range(track.first_frame, track.last_frame + 1) if f % step == 0)
    detected = sum(1 for b in track.boxes if b.face_source == "detected")
    return detected, max(looked, detected)


def faceless(labels: ClipLabels, gate: FaceGate) -> dict[int, str]:
    """Tracks failing the gate -> why, e.g. 'face detected on 3/27 detection frames (11%) < 50%'."""
    out = {}
    for t in labels.tracks:
        detected, looked = face_evidence(labels, t)
        share = detected / looked if looked else 0.0
        if share + 1e-9 < gate.min_detected_share or detected < gate.min_detected_frames:
            want = f"{gate.min_detected_share:.0%} and >= {gate.min_detected_frames} frames"
            out[t.track_id] = f"face detected on {detected}/{looked} detection frames ({share:.0%}), need {want}"
    return out


def gate_tracks(labels: ClipLabels, gate: FaceGate | None) -> tuple[ClipLabels, dict[int, str]]:
    """The clip's labels without the tracks failing `gate` (None: no gate), and the skipped tracks' reasons."""
    if gate is None:
        return labels, {}
    skipped = faceless(labels, gate)
    if not skipped:
        return labels, {}
    return dataclasses.replace(labels, tracks=[t for t in labels.tracks if t.track_id not in skipped]), skipped


def with_skipped(verdict: Verdict, skipped: dict[int, str]) -> Verdict:
    """The verdict naming the tracks the gate skipped (in `measured`, and in the reason of a rejection)."""
    if not skipped:
        return verdict
    measured = {**verdict.measured, "skipped_no_face": {str(t): why for t, why in sorted(skipped.items())}}
    reason = verdict.reason
    if not verdict.selected:
        reason += "; skipped (no detected face): " + "; ".join(f"track {t}: {why}" for t, why in sorted(skipped.items()))
    return dataclasses.replace(verdict, measured=measured, reason=reason)
