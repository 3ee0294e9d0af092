"""Which detectors run: the offline bundle (dlib, weights inside PyPI packages) or the full one (paper models)."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.vision.detectors import (
    DlibFaceEmbedder,
    DlibHogFaceDetector,
    DlibMmodFaceDetector,
    FaceDetector,
    FaceEmbedder,
    PersonDetector,
    RotatedHogFaceDetector,
)


@dataclass
class VisionBackend:
    name: str  # offline | full
    face: FaceDetector
    person: PersonDetector | None  # None: body boxes are estimated from face geometry
    embedder: FaceEmbedder | None
    rescue: RotatedHogFaceDetector | None = None  # second look where the first pass finds no face

    @property
    def model(self) -> str:
        """The models behind the stored rows, e.g. 'face=dlib-hog...; person=none(estimated); embed=dlib...'."""
        person = self.person.model if self.person else "none(estimated from face)"
        embed = self.embedder.model if self.embedder else "none"
        rescue = f"; rescue={self.rescue.model}" if self.rescue else ""
        return f"face={self.face.model}{rescue}; person={person}; embed={embed}"


def build_backend(profile: str = "offline", face_detector: str = "hog", upsample: int = 0, rescue: bool = True,
                  yolo_weights: str = "yolov8n.pt", deepface_detector: str = "retinaface") -> VisionBackend:
    """offline: dlib HOG (or `face_detector="mmod"`, the slower CNN) + face-geometry body boxes; with
    `rescue`, rotated / enlarged HOG passes look again for tilted and small faces (see pipeline).
    full: DeepFace `deepface_detector` faces + YOLOv8 person boxes; raises BackendUnavailable at once
    when a package or weights file is missing."""
    if profile == "offline":
        if face_detector not in ("hog", "mmod"):
            raise ValueError(f"offline face_detector must be 'hog' or 'mmod', got {face_detector!r}")
        face = DlibHogFaceDetector(upsample=upsample) if face_detector == "hog" else DlibMmodFaceDetector(upsample)
        second = RotatedHogFaceDetector() if rescue and face_detector == "hog" else None
        return VisionBackend("offline", face, None, DlibFaceEmbedder(), second)
    if profile == "full":
        from hvbench_assets.core.vision.full import (
            DeepFaceFaceDetector,
            YoloPersonDetector,
        )

        person = YoloPersonDetector(yolo_weights)
        return VisionBackend("full", DeepFaceFaceDetector(deepface_detector), person, DlibFaceEmbedder())
    raise ValueError(f"backend profile must be 'offline' or 'full', got {profile!r}")
