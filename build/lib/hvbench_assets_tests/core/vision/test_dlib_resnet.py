"""The numpy re-implementation of dlib's face descriptor ResNet against dlib itself, on real faces from the
shared clips, and its refusal of files that are not that network."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from hvbench_assets.core.vision.detectors import dlib_models_dir
from hvbench_assets.core.vision.dlib_resnet import DlibResnet
from hvbench_assets_tests.conftest import shared_clip

# Measured here: at most 5.3e-7 over 21 faces (descriptor norms ~1.5); float32 sums in another order than
# dlib's, nothing more. The bound leaves room for other BLAS kernels while catching any layer done wrong.
TOLERANCE = 1e-5


def _model() -> str:
    return str(dlib_models_dir() / "dlib_face_recognition_resnet_model_v1.dat")


@pytest.fixture(scope="module")
def faces():
    """(rgb frame, 5-point landmarks) for the HOG detector's faces on every 25th frame of two real clips."""
    import av
    import dlib

    detect = dlib.get_frontal_face_detector()
    landmarks = dlib.shape_predictor(str(dlib_models_dir() / "shape_predictor_5_face_landmarks.dat"))
    out = []
    for name, frames in (("man_talking_head.mp4", 125), ("two_people_talking.mp4", 250)):
        with av.open(str(shared_clip(name))) as container:
            for i, frame in enumerate(container.decode(video=0)):
                if i >= frames:
                    break
                if i % 25 == 0:
                    rgb = np.ascontiguousarray(frame.to_ndarray(format="rgb24"))  # dlib needs contiguous rows
                    out += [(rgb, landmarks(rgb, d)) for d in detect(rgb)]
    return out


@pytest.fixture(scope="module")
def net():
    return DlibResnet(_model())


def test_descriptors_equal_dlibs_on_real_faces(faces, net):
    import dlib

    assert len(faces) >= 10, f"the HOG detector found only {len(faces)} faces in the clips"
    reference = dlib.face_recognition_model_v1(_model())
    chips, diffs, t_dlib, t_ours = [], [], 0.0, 0.0
    for rgb, shape in faces:
        t = time.perf_counter()
        want = np.array(reference.compute_face_descriptor(rgb, shape))
        t_dlib += time.perf_counter() - t
        chip = dlib.get_face_chip(rgb, shape, size=150, padding=0.25)
        t = time.perf_counter()
        got = net.descriptor(chip)
        t_ours += time.perf_counter() - t
        assert got.shape == (128,) and got.dtype == np.float64
        diffs.append(float(np.abs(got - want).max()))
        chips.append(chip)
    print(f"\n{len(faces)} faces: max |ours - dlib| {max(diffs):.2e}; "
          f"{1000 * t_dlib / len(faces):.0f} ms per face in dlib, {1000 * t_ours / len(faces):.0f} ms here")
    assert max(diffs) < TOLERANCE
    # a batch gives the same descriptors as one chip at a time
    singles = np.stack([net.descriptor(c) for c in chips])
    np.testing.assert_allclose(net.descriptors(np.stack(chips)), singles, rtol=0, atol=1e-6)


def test_l1s_embedder_gives_dlibs_descriptor_for_a_face_box(faces):
    """DlibFaceEmbedder (what L1 stores per track) takes a BGR frame and a face box, finds the 5 landmarks
    and runs this network: the descriptor dlib itself computes for that face."""
    import cv2
    import dlib

    from hvbench_assets.core.vision.detectors import DlibFaceEmbedder

    embedder, reference = DlibFaceEmbedder(), dlib.face_recognition_model_v1(_model())
    for rgb, shape in faces[:3]:
        r = shape.rect
        box = (r.left(), r.top(), r.right(), r.bottom())
        got = embedder.embed(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), box)
        want = np.array(reference.compute_face_descriptor(rgb, shape))
        assert np.abs(got - want).max() < TOLERANCE


def test_chips_of_another_size_or_type_are_refused(net):
    with pytest.raises(ValueError, match="150x150x3"):
        net.descriptor(np.zeros((120, 120, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        net.descriptor(np.zeros((150, 150, 3), np.float32))


def _refused(path) -> str:
    with pytest.raises(ValueError, match=re.escape(str(path))) as e:
        DlibResnet(path)
    return str(e.value)


def test_files_that_are_not_the_network_are_refused_naming_the_file(tmp_path):
    data = open(_model(), "rb").read()

    garbage = tmp_path / "garbage.dat"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    _refused(garbage)

    half = tmp_path / "half.dat"  # cut inside a weight tensor
    half.write_bytes(data[:len(data) // 2])
    assert "past the end" in _refused(half)

    no_fc = tmp_path / "no_fc.dat"  # cut between two layers: the descriptor layer is missing
    no_fc.write_bytes(data[:data.rfind(b"\x01\x04fc_2")])
    assert "missing" in _refused(no_fc)

    pool = data.find(b"\x01\x0amax_pool_2\x01\x03\x01\x03")  # a 2x2 stem pool instead of 3x3
    assert pool > 0
    wrong_pool = tmp_path / "wrong_pool.dat"
    wrong_pool.write_bytes(data[:pool + 12] + b"\x01\x02\x01\x02" + data[pool + 16:])
    assert "max_pool_2" in _refused(wrong_pool)

    _refused(dlib_models_dir() / "mmod_human_face_detector.dat")  # another dlib network (the CNN detector)
