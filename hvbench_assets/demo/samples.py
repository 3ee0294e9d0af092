"""Sample videos for the demo, made from real photographs that ship inside scikit-image (the `demo`
extra): two people side by side, one of them talking.

The talker is the astronaut photograph whose mouth opens with the loudness of synthesised speech (the
lower lip and chin are shifted down and the gap darkened, placed by dlib's 68 face landmarks); the listener
is a face from the LFW subset, still. A slow camera pan gives the clip the motion the clip filter asks for.
It is a puppet, not a person: it exists so that the offline labels (L1, L2, L6, L7) have a clip with two
people and exactly one speaker, and the task layer has an AVAD question to make. ASD and AVSM are rejected with
their reasons, as they should be: the synthesised voice is a man's, the talker's face is not confidently one
(docs/gates.md).
"""

from __future__ import annotations

import cv2
import numpy as np

from hvbench_assets.core.media.encode import AUDIO_RATE
from hvbench_assets.core.package_data import PackageDataMissing, package_file


def _skimage_file(name: str):
    try:
        return package_file("skimage", "data", name, what="sample photographs", install="scikit-image")
    except PackageDataMissing:
        return None


def photos() -> tuple[np.ndarray, np.ndarray] | None:
    """(talker, listener) BGR face photographs, or None without scikit-image."""
    astro, lfw = _skimage_file("astronaut.png"), _skimage_file("lfw_subset.npy")
    if astro is None or lfw is None:
        return None
    talker = cv2.imread(str(astro))[40:300, 120:330]  # head and shoulders
    face = (np.load(lfw)[3] * 255).astype(np.uint8)  # 25x25 grey face crop
    listener = cv2.cvtColor(cv2.resize(face, (130, 130), interpolation=cv2.INTER_CUBIC), cv2.COLOR_GRAY2BGR)
    # tinted to a skin tone: a grey face reads as a picture, not a person (human_verdicts), and this listener
    # stands in for the second person of the clip
    listener = np.clip(listener * np.array([0.72, 0.82, 1.0]), 0, 255).astype(np.uint8)
    return talker, listener


def envelope(audio: np.ndarray, fps: float, n_frames: int) -> np.ndarray:
    """Loudness per video frame, 0..1 (RMS over each frame's samples, smoothed a little)."""
    hop = AUDIO_RATE / fps
    rms = np.array([np.sqrt(np.mean(audio[int(i * hop) : int((i + 1) * hop)] ** 2) + 1e-12) for i in range(n_frames)])
    rms = np.convolve(rms, [0.25, 0.5, 0.25], mode="same")
    top = np.percentile(rms, 95) or 1.0
    return np.clip(rms / top, 0, 1)


def _mouth(img: np.ndarray) -> tuple[int, int, int, int] | None:
    """(x1, y_lips, x2, y_chin) of the first face, from dlib's landmarks."""
    import dlib

    from hvbench_assets.core.speakers.lips import landmarks_model_path

    rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    faces = dlib.get_frontal_face_detector()(rgb, 1)
    if not faces:
        return None
    pts = dlib.shape_predictor(str(landmarks_model_path()))(rgb, faces[0])
    p = np.array([(pts.part(i).x, pts.part(i).y) for i in range(68)])
    lips = p[60:68]
    return int(p[48, 0]), int(lips[:, 1].mean()), int(p[54, 0]), int(p[8, 1])


def open_mouth(img: np.ndarray, mouth: tuple[int, int, int, int], opening: float, max_px: int = 9) -> np.ndarray:
    """The face with its jaw dropped by `opening` x max_px: lower lip and chin shifted down, the gap dark."""
    x1, y, x2, chin = mouth
    d = int(round(opening * max_px))
    if d <= 0:
        return img
    out = img.copy()
    pad = (x2 - x1) // 4
    xa, xb = max(0, x1 - pad), min(img.shape[1], x2 + pad)
    yb = min(img.shape[0] - d, chin + 4)
    out[y + d : yb + d, xa:xb] = img[y:yb, xa:xb]
    cv2.ellipse(out, ((x1 + x2) // 2, y + d // 2), ((x2 - x1) // 2 - 2, max(1, d // 2 + 1)), 0, 0, 360, (25, 20, 30), -1)
    return out


def two_people_talking(seconds: float, speech: np.ndarray, fps: float = 25.0, size=(480, 360)):
    """Frames of the talker (left, mouth following `speech`) and the listener (right); None without photos."""
    pics = photos()
    if pics is None:
        return None
    talker, listener = pics
    mouth = _mouth(talker)
    n = int(round(seconds * fps))
    env = envelope(speech, fps, n)
    w, h = size
    stage = np.full((h + 80, w + 160, 3), (70, 90, 110), np.uint8)
    stage[: h + 80] = np.linspace(60, 140, h + 80, dtype=np.uint8)[:, None, None]  # a wall with some shading
    th, tw = talker.shape[:2]
    ty, tx = 70, 60
    ly, lx = 120, tx + tw + 90

    def frames():
        for i in range(n):
            img = stage.copy()
            img[ty : ty + th, tx : tx + tw] = open_mouth(talker, mouth, env[i]) if mouth else talker
            img[ly : ly + 130, lx : lx + 130] = listener
            x0 = int(10 + 140 * i / max(1, n - 1))  # slow pan to the right
            y0 = int(40 + 20 * np.sin(i / n * np.pi))
            yield img[y0 : y0 + h, x0 : x0 + w]

    return frames()


def panned_photo(seconds: float, fps: float = 25.0, size=(480, 360)):
    """Frames of a still photograph of one person panned and zoomed like a handheld camera: a face whose
    mouth never moves (None without scikit-image)."""
    path = _skimage_file("astronaut.png")
    if path is None:
        return None
    big = cv2.resize(cv2.imread(str(path)), (720, 720))
    w, h = size
    n = int(round(seconds * fps))

    def frames():
        for i in range(n):
            zoom = 1.0 + 0.15 * i / n
            cw, ch = int(w / zoom * 1.2), int(h / zoom * 1.2)
            x0 = int(40 + 80 * i / n)
            yield cv2.resize(big[60 : 60 + ch, x0 : x0 + cw], (w, h))

    return frames()
