"""The `vision` resource: which face detector runs, tracker knobs, and the L2/L3 settings."""

from __future__ import annotations

import dagster as dg

from hvbench_assets.core.vision.backends import VisionBackend, build_backend
from hvbench_assets.core.vision.count import SAME_PERSON_DISTANCE
from hvbench_assets.core.vision.demographics import (
    ConfidenceRule,
    DeepFaceDemographics,
    DemographicsEstimator,
    build_estimator,
)
from hvbench_assets.core.vision.pipeline import TrackingParams
from hvbench_assets.defs.resources import env_or


class VisionResource(dg.ConfigurableResource):
    """Vision models and tracker settings. The backend profile (offline | full) comes from `settings`."""

    face_detector: str = "yunet"  # offline: yunet (small/turned faces) | hog (dlib, frontal) | mmod (dlib CNN, slow)
    upsample: int = 0  # dlib upsampling: 1 finds faces half the size, 4x slower
    detect_fps: float = 6.0
    detect_max_side: int = 0  # detector input size; 0: the detector's own (YuNet 480 px, HOG / mmod 640 px)
    quick_max_side: int = -1  # smaller size while every face is large; -1: the detector's own (YuNet 320 px); 0: off
    fine_max_side: int = 1280  # once per fine_every_s, detect at this size to catch small faces
    fine_every_s: float = 1.0
    fine_enlarge: float = 1.0  # 2.0 with fine_max_side=2560: 40 px faces in 1280 px frames, ~4x fine-pass cost
    max_gap_s: float = 2.5
    min_track_s: float = 0.5
    rescue: bool = True  # offline hog only: rotated / enlarged second look for tilted and small faces
    rescue_fps: float = 2.0  # whole-frame second looks per second (0: only around lost tracks)
    person_detector: str = "yolox"  # offline: yolox (YOLOX-nano person boxes) | none (body boxes estimated from faces)
    person_conf: float = 0.4  # offline: YOLOX person score threshold (benchmarks/body_boxes.py)
    person_fps: float = 2.0  # person detections per second, on face-detection frames (0: none)
    yolo_weights: str = "yolov8n.pt"  # full: local path or a name inside ultralytics' weights_dir
    deepface_detector: str = "retinaface"  # full: any DeepFace detector backend
    device: str = "auto"  # full: YOLOv8's device, auto (a CUDA GPU when torch sees one, else cpu) | cpu | cuda | cuda:N
    same_person_distance: float = SAME_PERSON_DISTANCE
    demographics_samples: int = 8
    demographics_model: str = "ssrnet"  # offline L3: ssrnet | utkface-tflite | none (unavailable rows)
    demographics_margin: float = -1.0  # face-crop margin per side (share of the face box); < 0: the model's default
    demographics_min_share: float = 0.75  # a track's child/adult (and, for an adult, gender) vote share for `ok`
    demographics_min_accuracy: float = 0.9  # an offline model's measured per-track child/adult (and, for an adult,
    # gender) accuracy for `ok` (docs/demographics.md); 0: no gate

    def backend(self, profile: str) -> VisionBackend:
        return build_backend(profile, face_detector=self.face_detector, upsample=self.upsample, rescue=self.rescue,
                             yolo_weights=self.yolo_weights, deepface_detector=self.deepface_detector,
                             person_detector=self.person_detector, person_conf=self.person_conf, device=self.device)

    def tracking_params(self) -> TrackingParams:
        return TrackingParams(detect_fps=self.detect_fps, person_fps=self.person_fps, detect_max_side=self.detect_max_side or None,
                              quick_max_side=None if self.quick_max_side < 0 else self.quick_max_side,
                              fine_max_side=self.fine_max_side, fine_every_s=self.fine_every_s,
                              fine_enlarge=self.fine_enlarge,
                              max_gap_s=self.max_gap_s, min_track_s=self.min_track_s, rescue_fps=self.rescue_fps)

    def demographics_estimator(self, profile: str) -> DemographicsEstimator | None:
        """DeepFace in full mode (fails fast when missing); offline the shipped `demographics_model`, or None
        (`none`: unavailable rows)."""
        if profile == "full":
            return DeepFaceDemographics()
        if self.demographics_model == "none":
            return None
        return build_estimator(self.demographics_model, None if self.demographics_margin < 0 else self.demographics_margin)

    def demographics_rule(self, profile: str) -> ConfidenceRule:
        """The vote-share rule everywhere; the measured-accuracy gate for the offline models only (DeepFace,
        the paper's model, is not measured here)."""
        return ConfidenceRule(min_share=self.demographics_min_share,
                              min_accuracy=0.0 if profile == "full" else self.demographics_min_accuracy)


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources={"vision": VisionResource(
        face_detector=env_or("HVBENCH_FACE_DETECTOR", "yunet"),
        person_detector=env_or("HVBENCH_PERSON_DETECTOR", "yolox"),
        yolo_weights=env_or("HVBENCH_YOLO_WEIGHTS", "yolov8n.pt"),
        deepface_detector=env_or("HVBENCH_DEEPFACE_DETECTOR", "retinaface"),
        device=env_or("HVBENCH_VISION_DEVICE", "auto"),
        demographics_model=env_or("HVBENCH_DEMOGRAPHICS_MODEL", "ssrnet"),
    )})
