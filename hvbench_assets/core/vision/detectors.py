"""Detector interfaces and the offline implementations (weights shipped inside PyPI packages).

Offline here means dlib: its HOG face detector is compiled into dlib, and face-recognition-models ships
the mmod CNN face detector, the 5-point landmark model and the ResNet face descriptor.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from hvbench_assets.core.package_data import package_file
from hvbench_assets.core.vision.boxes import overlaps
from hvbench_assets.core.vision.tables import Box
from hvbench_assets.core.vision.tracker import Detection


class BackendUnavailable(RuntimeError):
    """A model backend cannot load here; the message says what is missing and how to provide it."""


@runtime_checkable
class FaceDetector(Protocol):
    model: str

    def detect(self, image: np.ndarray) -> list[Detection]:
        """Faces in a BGR image, boxes in that image's pixels."""
        ...


@runtime_checkable
class PersonDetector(Protocol):
    model: str

    def detect(self, image: np.ndarray) -> list[Box]:
        """Whole-person boxes in a BGR image, in that image's pixels."""
        ...


@runtime_checkable
class FaceEmbedder(Protocol):
    model: str

    def embed(self, image: np.ndarray, face: Box) -> np.ndarray | None:
        """An identity vector for the face at `face` in a BGR image (None when it cannot be computed)."""
        ...


@lru_cache(maxsize=1)
def dlib_models_dir() -> Path:
    """The model folder of face-recognition-models (dlib's landmark and descriptor weights)."""
    return package_file("face_recognition_models", "models", what="dlib's face landmark and descriptor weights",
                        install="face-recognition-models", error=BackendUnavailable)


def _rgb(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))


class DlibHogFaceDetector:
    """dlib's frontal HOG + linear SVM detector (built into dlib). Fast on CPU; misses profiles and faces
    smaller than about 80 px at the detection scale (use `upsample=1` for small faces, 4x slower)."""

    def __init__(self, upsample: int = 0, threshold: float = 0.0):
        import dlib

        self._det = dlib.get_frontal_face_detector()
        self.upsample = upsample
        self.threshold = threshold
        self.model = f"dlib-hog-frontal(upsample={upsample},threshold={threshold})"

    def detect(self, image: np.ndarray) -> list[Detection]:
        rects, scores, _ = self._det.run(_rgb(image), self.upsample, self.threshold)
        return [Detection((float(r.left()), float(r.top()), float(r.right()), float(r.bottom())), float(s))
                for r, s in zip(rects, scores)]


class RotatedHogFaceDetector:
    """A second look with dlib's frontal HOG for faces the first pass misses: the image rotated by each
    of `angles` degrees (tilted heads), and upright when `upright` (the caller enlarged the image, so
    faces below HOG's ~80 px window become detectable). Boxes are mapped back axis-aligned at the
    detected size; duplicates across passes are dropped (best score kept)."""

    def __init__(self, angles: tuple[float, ...] = (-20.0, 20.0), threshold: float = 0.2):
        import dlib

        self._det = dlib.get_frontal_face_detector()
        self.angles = tuple(angles)
        self.threshold = threshold
        self.model = f"dlib-hog-rotated(angles={list(self.angles)},threshold={threshold})"

    def detect(self, image: np.ndarray, upright: bool = True) -> list[Detection]:
        rgb = _rgb(image)
        h, w = rgb.shape[:2]
        found: list[Detection] = []
        for angle in ((0.0,) if upright else ()) + self.angles:
            rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
            img = rgb if angle == 0 else cv2.warpAffine(rgb, rot, (w, h), borderMode=cv2.BORDER_REPLICATE)
            back = cv2.invertAffineTransform(rot)
            rects, scores, _ = self._det.run(img, 0, self.threshold)
            for r, s in zip(rects, scores):
                cx, cy = back @ np.array([(r.left() + r.right()) / 2, (r.top() + r.bottom()) / 2, 1.0])
                half = max(r.width(), r.height()) / 2
                tag = "hog-upright" if angle == 0 else f"hog-rot{angle:+g}"
                found.append(Detection((cx - half, cy - half, cx + half, cy + half), float(s), tag))
        kept: list[Detection] = []
        for d in sorted(found, key=lambda d: -d.score):
            if not any(overlaps(d.box, k.box) for k in kept):
                kept.append(d)
        return kept


class DlibMmodFaceDetector:
    """dlib's mmod CNN face detector (weights in face-recognition-models): more robust to pose and
    light than HOG, about 1-2.5 s per 640 px frame on this CPU."""

    def __init__(self, upsample: int = 0):
        import dlib

        self._det = dlib.cnn_face_detection_model_v1(str(dlib_models_dir() / "mmod_human_face_detector.dat"))
        self.upsample = upsample
        self.model = f"dlib-mmod-cnn(upsample={upsample})"

    def detect(self, image: np.ndarray) -> list[Detection]:
        out = []
        for d in self._det(_rgb(image), self.upsample):
            r = d.rect
            out.append(Detection((float(r.left()), float(r.top()), float(r.right()), float(r.bottom())), float(d.confidence)))
        return out


class DlibFaceEmbedder:
    """dlib's ResNet face descriptor on 5-point aligned chips; same person < 0.6 Euclidean distance."""

    model = "dlib_face_recognition_resnet_model_v1"

    def __init__(self):
        import dlib

        folder = dlib_models_dir()
        self._dlib = dlib
        self._shape = dlib.shape_predictor(str(folder / "shape_predictor_5_face_landmarks.dat"))
        self._net = dlib.face_recognition_model_v1(str(folder / "dlib_face_recognition_resnet_model_v1.dat"))

    def embed(self, image: np.ndarray, face: Box) -> np.ndarray | None:
        rgb = _rgb(image)
        rect = self._dlib.rectangle(*(int(round(v)) for v in face))
        shape = self._shape(rgb, rect)
        return np.asarray(self._net.compute_face_descriptor(rgb, shape), dtype=np.float64)
