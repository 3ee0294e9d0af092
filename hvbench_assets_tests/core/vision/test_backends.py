"""Backend selection and the full backends' fail-fast messages (their packages/weights are absent here)."""

import numpy as np
import pytest

from hvbench_assets.core.vision.backends import build_backend
from hvbench_assets.core.vision.demographics import DeepFaceDemographics
from hvbench_assets.core.vision.detectors import (
    BackendUnavailable,
    DlibHogFaceDetector,
    FaceDetector,
    RotatedHogFaceDetector,
    dlib_models_dir,
)
from hvbench_assets.core.vision.full import (
    require_deepface_weights,
    resolve_yolo_weights,
)


def test_offline_backend_names_its_models():
    be = build_backend("offline")
    assert be.name == "offline" and be.person is not None and isinstance(be.face, FaceDetector)
    assert "yunet" in be.model and "yolox-nano-person" in be.model and "resnet" in be.model
    assert "estimated" in build_backend("offline", person_detector="none").model
    assert be.rescue is None and not be.fine_pass  # YuNet needs neither HOG's second looks nor a larger pass
    assert "dlib-hog" in build_backend("offline", face_detector="hog").model
    assert (dlib_models_dir() / "dlib_face_recognition_resnet_model_v1.dat").is_file()
    with pytest.raises(ValueError):
        build_backend("gpu")
    with pytest.raises(ValueError):
        build_backend("offline", face_detector="retinaface")


def test_hog_detector_finds_no_face_in_noise_and_boxes_in_pixels(man_talking_head):
    from hvbench_assets.core.media import iter_frames

    det = DlibHogFaceDetector()
    assert det.detect(np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)) == []
    frame = next(iter_frames(man_talking_head)).image
    faces = det.detect(frame)
    assert len(faces) == 1 and faces[0].score > 0
    x1, y1, x2, y2 = faces[0].box
    assert 0 <= x1 < x2 <= frame.shape[1] and 0 <= y1 < y2 <= frame.shape[0]


def test_rotated_pass_finds_a_tilted_face_the_upright_pass_misses(man_talking_head):
    import cv2

    from hvbench_assets.core.media import iter_frames
    from hvbench_assets.core.vision.boxes import iou

    frame = cv2.resize(next(iter_frames(man_talking_head)).image, (480, 480))
    hog, rescue = DlibHogFaceDetector(), RotatedHogFaceDetector()
    (upright,) = hog.detect(frame)
    centre = ((upright.box[0] + upright.box[2]) / 2, (upright.box[1] + upright.box[3]) / 2)
    tilted = cv2.warpAffine(frame, cv2.getRotationMatrix2D(centre, 45, 1.0), (480, 480), borderMode=cv2.BORDER_REPLICATE)
    assert hog.detect(tilted) == []
    (found,) = rescue.detect(tilted, upright=False)
    assert found.detector == "hog-rot-20" and iou(found.box, upright.box) > 0.8  # mapped back onto the face
    assert rescue.detect(np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)) == []


def test_offline_backend_rescue_can_be_switched_off():
    assert "dlib-hog-rotated" in build_backend("offline", face_detector="hog").model
    be = build_backend("offline", face_detector="hog", rescue=False)
    assert be.rescue is None and "rotated" not in be.model


@pytest.mark.parametrize("needle", ["hvbench[full]", "offline"])
def test_full_backend_fails_fast_naming_the_package(needle):
    pytest.importorskip("dlib")
    with pytest.raises(BackendUnavailable) as err:
        build_backend("full")
    assert "ultralytics" in str(err.value) and needle in str(err.value)


def test_missing_yolo_weights_message_says_how_to_pre_seed(tmp_path):
    with pytest.raises(BackendUnavailable) as err:
        resolve_yolo_weights(str(tmp_path / "yolov8n.pt"))
    msg = str(err.value)
    assert "yolov8n.pt" in msg and "YOLO_CONFIG_DIR" in msg and "not attempted" in msg
    weights = tmp_path / "mine.pt"
    weights.write_bytes(b"x")
    assert resolve_yolo_weights(str(weights)) == weights


def test_missing_deepface_weights_message_names_files_and_deepface_home(tmp_path):
    with pytest.raises(BackendUnavailable) as err:
        require_deepface_weights(["age_model_weights.onnx"], "L3", deepface_home=tmp_path)
    assert "age_model_weights.onnx" in str(err.value) and "DEEPFACE_HOME" in str(err.value)
    (tmp_path / ".deepface" / "weights").mkdir(parents=True)
    (tmp_path / ".deepface" / "weights" / "age_model_weights.onnx").write_bytes(b"x")
    require_deepface_weights(["age_model_weights.onnx"], "L3", deepface_home=tmp_path)  # present: no error


def test_deepface_demographics_fails_fast_without_the_package():
    with pytest.raises(BackendUnavailable) as err:
        DeepFaceDemographics()
    assert "deepface" in str(err.value) and "hvbench[full]" in str(err.value)


class RecordingYolo:
    """Stands in for ultralytics.YOLO (not installed here): records the device each prediction asks for."""

    def __init__(self, path):
        self.path, self.devices = path, []

    def predict(self, image, classes, conf, device, verbose):
        self.devices.append(device)
        return []


def test_yolov8_predicts_on_the_resolved_device(tmp_path, monkeypatch):
    import sys
    import types

    from hvbench_assets.core.devices import DeviceUnavailable
    from hvbench_assets.core.vision.full import YoloPersonDetector
    from hvbench_assets_tests.fake_cuda import FakeCuda

    monkeypatch.setitem(sys.modules, "ultralytics", types.SimpleNamespace(YOLO=RecordingYolo))
    weights = tmp_path / "yolov8n.pt"
    weights.write_bytes(b"x")
    image = np.zeros((48, 64, 3), np.uint8)
    here = YoloPersonDetector(str(weights))
    assert here.detect(image) == [] and here._model.devices == ["cpu"]
    assert here.model == "ultralytics-yolov8n-person; device=cpu"
    with pytest.raises(DeviceUnavailable, match="HVBENCH_VISION_DEVICE"):
        YoloPersonDetector(str(weights), device="cuda")
    FakeCuda(monkeypatch, count=2)
    gpu = YoloPersonDetector(str(weights))
    gpu.detect(image)
    assert gpu._model.devices == ["cuda:0"] and gpu.model.endswith("; device=cuda:0")
    assert YoloPersonDetector(str(weights), device="cuda:1").device == "cuda:1"


def test_vision_resource_passes_its_device_to_the_full_backend(monkeypatch):
    from hvbench_assets.core.vision import full
    from hvbench_assets.defs.resources import VisionResource, resources

    asked = []
    monkeypatch.setattr(full, "YoloPersonDetector", lambda weights, device: asked.append(device) or
                        type("P", (), {"model": f"yolo; device={device}"})())
    monkeypatch.setattr(full, "DeepFaceFaceDetector", lambda name, **kw: type("F", (), {"model": f"deepface-{name}"})())
    assert resources().resources["vision"].device == "auto"
    be = VisionResource(device="cuda:1").backend("full")
    assert asked == ["cuda:1"] and "person=yolo; device=cuda:1" in be.model
