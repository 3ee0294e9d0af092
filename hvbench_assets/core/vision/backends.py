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
    YoloxPersonDetector,
    YuNetFaceDetector,
    YuNetOnnxFaceDetector,
)

OFFLINE_FACE_DETECTORS = ("yunet", "yunet_onnx", "hog", "mmod")
OFFLINE_PERSON_DETECTORS = ("yolox", "none")


@dataclass
class VisionBackend:
    name: str  # offline | full
    face: FaceDetector
    person: PersonDetector | None  # None: body boxes are estimated from face geometry
    embedder: FaceEmbedder | None
    rescue: RotatedHogFaceDetector | None = None  # second look where the first pass finds no face
    fine_pass: bool = True  # a larger detection image now and then finds smaller faces (not for YuNet,
    # which finds ~10 px faces at 640 px and loses accuracy above 960 px)
    detect_max_side: int = 640  # input size on ordinary detection frames, unless TrackingParams sets one:
    # YuNet at 480 px finds what it finds at 640 px on the labelled frames in 0.58x the time (face_recall.py)
    quick_max_side: int = 0  # smaller input while every live face is large (see TrackingParams); 0: none.
    # YuNet at 320 px: recall 0.94-1.00 on faces >= 48 px in 640 px frames, at 0.37x the 480 px time

    @property
    def model(self) -> str:
        """The models behind the stored rows, e.g. 'face=dlib-hog...; person=none(estimated); embed=dlib...'."""
        person = self.person.model if self.person else "none(estimated from face)"
        embed = self.embedder.model if self.embedder else "none"
        rescue = f"; rescue={self.rescue.model}" if self.rescue else ""
        return f"face={self.face.model}{rescue}; person={person}; embed={embed}"


def build_backend(profile: str = "offline", face_detector: str = "yunet", upsample: int = 0, rescue: bool = True,
                  yolo_weights: str = "yolov8n.pt", deepface_detector: str = "retinaface",
                  person_detector: str = "yolox", person_conf: float = 0.4, device: str = "auto",
                  deepface_home: str = "") -> VisionBackend:
    """offline: libfacedetection's YuNet (`face_detector="yunet"`, default, the yuface wheel; `"yunet_onnx"`: the same
    network on onnxruntime), dlib HOG (`"hog"`; with `rescue`,
    rotated / enlarged HOG passes look again for tilted and small faces, see pipeline) or dlib's slow mmod
    CNN (`"mmod"`), + YOLOX-nano person boxes above `person_conf` (`person_detector="yolox"`, default) or
    face-geometry body boxes only (`"none"`). full: DeepFace `deepface_detector` faces + YOLOv8 person
    boxes on `device` (auto | cpu | cuda | cuda:N; offline models run on the CPU), DeepFace weights checked under
    `deepface_home` (DEEPFACE_HOME; '' = ~). Raises BackendUnavailable
    at once when a package or weights file is missing."""
    if profile == "offline":
        if face_detector not in OFFLINE_FACE_DETECTORS:
            raise ValueError(f"offline face_detector must be one of {OFFLINE_FACE_DETECTORS}, got {face_detector!r}")
        if person_detector not in OFFLINE_PERSON_DETECTORS:
            raise ValueError(f"offline person_detector must be one of {OFFLINE_PERSON_DETECTORS}, got {person_detector!r}")
        person = YoloxPersonDetector(conf=person_conf) if person_detector == "yolox" else None
        if face_detector in ("yunet", "yunet_onnx"):
            face = YuNetFaceDetector() if face_detector == "yunet" else YuNetOnnxFaceDetector()
            return VisionBackend("offline", face, person, DlibFaceEmbedder(), fine_pass=False,
                                 detect_max_side=480, quick_max_side=320)
        face = DlibHogFaceDetector(upsample=upsample) if face_detector == "hog" else DlibMmodFaceDetector(upsample)
        second = RotatedHogFaceDetector() if rescue and face_detector == "hog" else None
        return VisionBackend("offline", face, person, DlibFaceEmbedder(), second)
    if profile == "full":
        from hvbench_assets.core.vision.full import (
            DeepFaceFaceDetector,
            YoloPersonDetector,
        )

        person = YoloPersonDetector(yolo_weights, device=device)
        return VisionBackend("full", DeepFaceFaceDetector(deepface_detector, deepface_home=deepface_home), person, DlibFaceEmbedder())
    raise ValueError(f"backend profile must be 'offline' or 'full', got {profile!r}")
