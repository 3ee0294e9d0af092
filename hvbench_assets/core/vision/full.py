"""Full (paper) backends: ultralytics YOLOv8 person boxes and a DeepFace face detector (RetinaFace by
default, S3FD-class). Imports happen inside the constructors; missing packages or weights fail at once
with what to install or pre-seed, instead of a slow download attempt deep inside a run."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from hvbench_assets.core.devices import provenance_text, resolve_device
from hvbench_assets.core.vision.detectors import BackendUnavailable
from hvbench_assets.core.vision.tables import Box
from hvbench_assets.core.vision.tracker import Detection

FULL_EXTRA = "pip install 'hvbench[full]'"


def require(module: str, package: str, why: str) -> object:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BackendUnavailable(
            f"{package} is not installed or cannot be imported ({exc.__class__.__name__}: {exc}); it is needed for "
            f"{why}. Install the full extra: {FULL_EXTRA}, or use backend_profile=offline."
        ) from exc


def deepface_weights_dir(deepface_home: str | Path = "") -> Path:
    """Where DeepFace keeps weights: <DEEPFACE_HOME>/.deepface/weights; the caller passes DEEPFACE_HOME's value
    ('' = ~, DeepFace's own default)."""
    return Path(deepface_home or Path.home()) / ".deepface" / "weights"


def require_deepface_weights(files: list[str], why: str, deepface_home: str | Path = "") -> None:
    folder = deepface_weights_dir(deepface_home)
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise BackendUnavailable(
            f"DeepFace weights {missing} for {why} are missing in {folder}. Pre-seed them: on a machine with "
            f"network run DeepFace once (it downloads into $DEEPFACE_HOME/.deepface/weights) and copy that folder "
            f"here, then set DEEPFACE_HOME to its parent's parent; or use backend_profile=offline."
        )


class YoloPersonDetector:
    """ultralytics YOLOv8 restricted to class 0 (person), as in the paper; `device` auto: a CUDA GPU when torch
    sees one (core/devices.py)."""

    def __init__(self, weights: str = "yolov8n.pt", conf: float = 0.25, device: str = "auto"):
        ultralytics = require("ultralytics", "ultralytics", "YOLOv8 person boxes")
        path = resolve_yolo_weights(weights)
        self.device = resolve_device(device, "the vision device (HVBENCH_VISION_DEVICE)")
        self._model = ultralytics.YOLO(str(path))
        self.conf = conf
        self.model = provenance_text(f"ultralytics-{Path(weights).stem}-person", self.device)

    def detect(self, image: np.ndarray) -> list[Box]:
        res = self._model.predict(image, classes=[0], conf=self.conf, device=self.device, verbose=False)
        xyxy = res[0].boxes.xyxy.cpu().numpy() if res and res[0].boxes is not None else np.zeros((0, 4))
        return [tuple(float(v) for v in b) for b in xyxy]  # type: ignore[misc]


def resolve_yolo_weights(weights: str) -> Path:
    """A local weights file: the path itself, or the name inside ultralytics' weights_dir (set by
    YOLO_CONFIG_DIR's settings). Never triggers a download."""
    p = Path(weights).expanduser()
    if p.is_file():
        return p
    looked = [str(p.resolve())]
    try:
        from ultralytics.utils import SETTINGS

        candidate = Path(SETTINGS.get("weights_dir", "")) / p.name
        looked.append(str(candidate))
        if candidate.is_file():
            return candidate
    except ImportError:
        pass
    raise BackendUnavailable(
        f"YOLO weights {weights!r} not found (looked in {looked}); downloads are not attempted. Pre-seed: on a "
        f"machine with network run `yolo predict model={p.name}` (or fetch it from the ultralytics assets "
        f"release), copy the file here and pass its path as yolo_weights, or put it into the weights_dir of the "
        f"ultralytics settings under $YOLO_CONFIG_DIR."
    )


class DeepFaceFaceDetector:
    """A DeepFace detector backend (default RetinaFace; 'yolov8' for YOLO-face) returning face boxes. DeepFace takes
    no device: TensorFlow (RetinaFace) and ultralytics (YOLO-face) use a visible GPU by themselves."""

    WEIGHTS = {"retinaface": ["retinaface.h5"], "yolov8": ["yolov8n-face.pt"]}

    def __init__(self, detector_backend: str = "retinaface", min_confidence: float = 0.5, deepface_home: str = ""):
        self._deepface = require("deepface", "deepface", f"the {detector_backend} face detector").DeepFace
        if detector_backend == "retinaface":
            require("retinaface", "retina-face", "the RetinaFace face detector")
        require_deepface_weights(self.WEIGHTS.get(detector_backend, []), f"the {detector_backend} face detector",
                                 deepface_home)
        self.detector_backend = detector_backend
        self.min_confidence = min_confidence
        self.model = f"deepface-{detector_backend}"

    def detect(self, image: np.ndarray) -> list[Detection]:
        faces = self._deepface.extract_faces(
            img_path=image, detector_backend=self.detector_backend, enforce_detection=False, align=False
        )
        out = []
        h, w = image.shape[:2]
        for f in faces:
            a, conf = f["facial_area"], float(f.get("confidence") or 0.0)
            if conf < self.min_confidence or (a["w"] >= w - 1 and a["h"] >= h - 1):
                continue  # enforce_detection=False returns the whole image with confidence 0 when none found
            out.append(Detection((float(a["x"]), float(a["y"]), float(a["x"] + a["w"]), float(a["y"] + a["h"])), conf))
        return out
