"""L1's face descriptor: dlib's ResNet in numpy (core/vision/dlib_resnet.py, what DlibFaceEmbedder runs) against
dlib's own `compute_face_descriptor` on the same faces in the same process, with the largest difference.

Faces: dlib HOG on every 25th frame of the shared clips two_people_talking and man_talking_head.
Run: .venv/bin/python benchmarks/face_descriptor.py"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import av  # noqa: E402
import dlib  # noqa: E402
import numpy as np  # noqa: E402

from hvbench_assets.core.vision.detectors import dlib_models_dir  # noqa: E402
from hvbench_assets.core.vision.dlib_resnet import DlibResnet  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"


def faces() -> list[tuple[np.ndarray, object]]:
    detect = dlib.get_frontal_face_detector()
    landmarks = dlib.shape_predictor(str(dlib_models_dir() / "shape_predictor_5_face_landmarks.dat"))
    out = []
    for name in ("two_people_talking.mp4", "man_talking_head.mp4"):
        with av.open(str(SHARED / name)) as container:
            for i, frame in enumerate(container.decode(video=0)):
                if i % 25 == 0:
                    rgb = np.ascontiguousarray(frame.to_ndarray(format="rgb24"))
                    out += [(rgb, landmarks(rgb, d)) for d in detect(rgb)]
    return out


def main() -> int:
    if not SHARED.is_dir():
        print(f"shared clips missing in {SHARED}", file=sys.stderr)
        return 2
    model = dlib_models_dir() / "dlib_face_recognition_resnet_model_v1.dat"
    reference, ours = dlib.face_recognition_model_v1(str(model)), DlibResnet(model)
    found = faces()
    t_dlib = t_ours = 0.0
    worst = 0.0
    for rgb, shape in found:
        t = time.perf_counter()
        want = np.array(reference.compute_face_descriptor(rgb, shape))
        t_dlib += time.perf_counter() - t
        t = time.perf_counter()
        got = ours.descriptor(dlib.get_face_chip(rgb, shape, size=150, padding=0.25))  # chip included, as L1 pays it
        t_ours += time.perf_counter() - t
        worst = max(worst, float(np.abs(got - want).max()))
    n = len(found)
    print(f"{n} faces: dlib {1000 * t_dlib / n:.0f} ms a face, numpy {1000 * t_ours / n:.0f} ms "
          f"({t_ours / t_dlib:.2f}x dlib's time); largest difference {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
