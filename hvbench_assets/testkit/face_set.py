"""A labelled face set for measuring face detectors: hand-labelled frames of ../shared/videos and frames
generated from them with boxes known by construction. Nothing here is stored as media; every image is
rebuilt from the shared clips (deterministically, from a seed).

- real: the frames listed in data/face_boxes.json with their hand-drawn boxes.
- portrait: 362x640 phone-shaped frames: a face-free backdrop from the clips with 1-3 real faces pasted
  at 24-64 px width, some mirrored and some rotated by up to 30 degrees.
- wide: 640x360 frames: a labelled real frame shrunk until its largest face is 24-64 px wide, placed on a
  backdrop (small turned faces keep their pose), plus 0-2 pasted faces.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.vision.boxes import iou

LABELS = Path(__file__).resolve().parent / "data" / "face_boxes.json"
SIZE_BUCKETS = ((0, 24), (24, 32), (32, 48), (48, 64), (64, 128), (128, 10**6))  # face width in pixels


@dataclass
class Face:
    box: tuple[float, float, float, float]
    pose: str  # frontal | turned | ignore

    @property
    def width(self) -> float:
        return self.box[2] - self.box[0]


@dataclass
class LabelledFrame:
    name: str
    kind: str  # real | portrait | wide
    image: np.ndarray  # BGR
    faces: list[Face] = field(default_factory=list)


def load_labels(path: Path = LABELS) -> dict:
    return json.loads(path.read_text())


@lru_cache(maxsize=8)
def _clip_frames(path: str, indexes: tuple[int, ...]) -> dict[int, np.ndarray]:
    wanted = set(indexes)
    out = {}
    for fr in iter_frames(path):
        if fr.index in wanted:
            out[fr.index] = fr.image
            if len(out) == len(wanted):
                break
    missing = wanted - set(out)
    if missing:
        raise ValueError(f"{path}: labelled frames {sorted(missing)} not found")
    return out


def real_frames(videos: Path, labels: dict | None = None) -> list[LabelledFrame]:
    """The hand-labelled frames, decoded from the clips in `videos`."""
    labels = labels or load_labels()
    by_clip: dict[str, list[dict]] = {}
    for f in labels["frames"]:
        by_clip.setdefault(f["clip"], []).append(f)
    out = []
    for clip, frames in by_clip.items():
        images = _clip_frames(str(videos / clip), tuple(f["frame"] for f in frames))
        for f in frames:
            img = images[f["frame"]]
            if list(img.shape[1::-1]) != f["size"]:
                raise ValueError(f"{clip} frame {f['frame']}: decoded size {img.shape[1::-1]} != labelled {f['size']}")
            out.append(LabelledFrame(f"{Path(clip).stem}@{f['frame']}", "real", img,
                                     [Face(tuple(x["box"]), x["pose"]) for x in f["faces"]]))
    return out


def _backdrop(rng: np.random.Generator, backdrops: list[np.ndarray], w: int, h: int) -> np.ndarray:
    """A random crop of a face-free region, scaled to cover w x h."""
    src = backdrops[rng.integers(len(backdrops))]
    k = max(w / src.shape[1], h / src.shape[0]) * rng.uniform(1.0, 1.4)
    big = cv2.resize(src, None, fx=k, fy=k, interpolation=cv2.INTER_LINEAR)
    x = int(rng.integers(0, big.shape[1] - w + 1))
    y = int(rng.integers(0, big.shape[0] - h + 1))
    out = big[y:y + h, x:x + w].copy()
    return cv2.flip(out, 1) if rng.random() < 0.5 else out


def _paste_face(rng: np.random.Generator, canvas: np.ndarray, donor: LabelledFrame, face: Face,
                width: float, angle: float, flip: bool, taken: list[Face]) -> Face | None:
    """Paste `face` of `donor` (with its hair and some context, feathered oval mask) so that the face is
    `width` px wide, rotated by `angle` degrees; returns its box (centre moved by the rotation, size kept),
    or None when no free spot was found."""
    x1, y1, x2, y2 = face.box
    fw, fh = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    m = 0.45  # context around the face, as a share of its size
    px1, py1 = int(max(0, cx - fw * (0.5 + m))), int(max(0, cy - fh * (0.5 + m)))
    px2, py2 = int(min(donor.image.shape[1], cx + fw * (0.5 + m))), int(min(donor.image.shape[0], cy + fh * (0.5 + m)))
    patch = donor.image[py1:py2, px1:px2]
    k = width / fw
    patch = cv2.resize(patch, None, fx=k, fy=k, interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
    ph, pw = patch.shape[:2]
    fcx, fcy = (cx - px1) * k, (cy - py1) * k  # face centre in the patch
    mask = np.zeros((ph, pw), np.float32)
    cv2.ellipse(mask, (int(fcx), int(fcy)), (int(fw * k * 0.5 * 1.5), int(fh * k * 0.5 * 1.4)), 0, 0, 360, 1.0, -1)
    for other in donor.faces:  # a neighbour's face inside the context would be an unlabelled face
        if other.box != face.box:
            ox1, oy1, ox2, oy2 = ((v - o) * k for v, o in zip(other.box, (px1, py1, px1, py1)))
            cv2.rectangle(mask, (int(ox1), int(oy1)), (int(np.ceil(ox2)), int(np.ceil(oy2))), 0.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, width * 0.12))
    if flip:
        patch, mask, fcx = cv2.flip(patch, 1), cv2.flip(mask, 1), pw - fcx
    if angle:
        rot = cv2.getRotationMatrix2D((fcx, fcy), angle, 1.0)
        patch = cv2.warpAffine(patch, rot, (pw, ph), borderMode=cv2.BORDER_REFLECT)
        mask = cv2.warpAffine(mask, rot, (pw, ph))
    H, W = canvas.shape[:2]
    bw, bh = fw * k, fh * k
    for _ in range(40):
        ox = int(rng.integers(0, max(1, W - pw)))
        oy = int(rng.integers(0, max(1, H - ph)))
        box = (ox + fcx - bw / 2, oy + fcy - bh / 2, ox + fcx + bw / 2, oy + fcy + bh / 2)
        if box[0] < 0 or box[1] < 0 or box[2] > W or box[3] > H:
            continue
        grown = (box[0] - bw * 0.6, box[1] - bh * 0.6, box[2] + bw * 0.6, box[3] + bh * 0.6)
        if any(iou(grown, t.box) > 0 for t in taken):
            continue
        region = canvas[oy:oy + ph, ox:ox + pw]
        a = mask[:region.shape[0], :region.shape[1], None]
        region[:] = (a * patch[:region.shape[0], :region.shape[1]] + (1 - a) * region).astype(np.uint8)
        return Face(tuple(round(v, 1) for v in box), face.pose)
    return None


def generated_frames(real: list[LabelledFrame], videos: Path, n_portrait: int = 24, n_wide: int = 24,
                     seed: int = 18, labels: dict | None = None) -> list[LabelledFrame]:
    """Frames with known boxes built from the real labelled frames (see module doc)."""
    labels = labels or load_labels()
    rng = np.random.default_rng(seed)
    backdrops = []
    for clip, (x1, y1, x2, y2) in labels["backgrounds"].items():
        img = _clip_frames(str(videos / clip), (0,))[0]
        backdrops.append(img[y1:y2, x1:x2])
    donors = [(fr, f) for fr in real for f in fr.faces if f.pose != "ignore" and f.width >= 40]
    out = []

    def paste_some(canvas, taken, count):
        for _ in range(count):
            fr, f = donors[rng.integers(len(donors))]
            width = float(rng.uniform(24, 64))
            angle = float(rng.choice([0.0, rng.uniform(-30, 30)]))
            face = _paste_face(rng, canvas, fr, f, width, angle, bool(rng.random() < 0.5), taken)
            if face is not None:
                taken.append(face)

    for i in range(n_portrait):
        canvas = _backdrop(rng, backdrops, 362, 640)
        faces: list[Face] = []
        paste_some(canvas, faces, int(rng.integers(1, 4)))
        out.append(LabelledFrame(f"portrait{i:02d}", "portrait", canvas, faces))
    scenes = [fr for fr in real if fr.kind == "real" and any(f.pose != "ignore" for f in fr.faces)]
    for i in range(n_wide):
        canvas = _backdrop(rng, backdrops, 640, 360)
        scene = scenes[rng.integers(len(scenes))]
        biggest = max(f.width for f in scene.faces)
        k = min(float(rng.uniform(24, 64)) / biggest, 600 / scene.image.shape[1], 340 / scene.image.shape[0])
        small = cv2.resize(scene.image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        sh, sw = small.shape[:2]
        ox, oy = int(rng.integers(0, 640 - sw + 1)), int(rng.integers(0, 360 - sh + 1))
        canvas[oy:oy + sh, ox:ox + sw] = small
        faces = [Face(tuple(round(v * k + o, 1) for v, o in zip(f.box, (ox, oy, ox, oy))), f.pose) for f in scene.faces]
        paste_some(canvas, faces, int(rng.integers(0, 3)))
        out.append(LabelledFrame(f"wide{i:02d}({scene.name})", "wide", canvas, faces))
    return out


def bucket_of(width: float) -> str:
    for lo, hi in SIZE_BUCKETS:
        if lo <= width < hi:
            return f"{lo}-{hi}" if hi < 10**6 else f">={lo}"
    raise ValueError(width)


def bucket_names() -> list[str]:
    return [bucket_of(lo) for lo, _ in SIZE_BUCKETS]


@dataclass
class Tally:
    tp: int = 0
    fn: int = 0
    fp: int = 0

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None


def score_frame(faces: list[Face], detections: list[tuple[float, float, float, float]],
                min_iou: float = 0.3) -> tuple[list[tuple[Face, bool]], list[tuple[float, float, float, float]]]:
    """Greedy one-to-one matching by IoU (>= min_iou; lenient because label and detector conventions
    differ, e.g. hairline vs brow). Returns each labelled face (not `ignore`) with found/missed, and the
    false detections (those matching neither a face nor an `ignore` region)."""
    pairs = sorted(((iou(f.box, d), i, j) for i, f in enumerate(faces) for j, d in enumerate(detections)), reverse=True)
    face_hit: dict[int, int] = {}
    det_hit: set[int] = set()
    for v, i, j in pairs:
        if v < min_iou:
            break
        if i in face_hit or j in det_hit:
            continue
        face_hit[i], _ = j, det_hit.add(j)
    found = [(f, i in face_hit) for i, f in enumerate(faces) if f.pose != "ignore"]
    false = [d for j, d in enumerate(detections) if j not in det_hit]
    return found, false


def portrait_clip(videos: Path, dst: Path, seconds: float | None = None, face_scale: float = 0.45) -> Path:
    """A 362x640 phone-shaped clip with small faces: two_people_talking shrunk by `face_scale` (its faces
    become about 25-45 px wide) over a face-free backdrop, looped to `seconds` (default: its length),
    with its sound. The two women stay the only people in it."""
    from hvbench_assets.core.media import probe_video, source_audio, write_video
    from hvbench_assets.core.media.encode import AUDIO_RATE

    src = videos / "two_people_talking.mp4"
    info = probe_video(src)
    backdrop_src = videos / "man_talking_head.mp4"
    x1, y1, x2, y2 = load_labels()["backgrounds"][backdrop_src.name]
    bg = _clip_frames(str(backdrop_src), (0,))[0][y1:y2, x1:x2]
    bg = cv2.resize(bg, (362, 640), interpolation=cv2.INTER_AREA)
    n_total = int(round((seconds or info.duration_s) * info.fps))
    audio = source_audio(src)

    def frames():
        n = 0
        while n < n_total:
            for fr in iter_frames(src):
                if n >= n_total:
                    return
                small = cv2.resize(fr.image, None, fx=face_scale, fy=face_scale, interpolation=cv2.INTER_AREA)
                canvas = bg.copy()
                h, w = small.shape[:2]
                ox, oy = (362 - w) // 2, 260
                canvas[oy:oy + h, ox:ox + w] = small
                yield canvas
                n += 1

    want = int(round(n_total / info.fps * AUDIO_RATE))
    sound = np.resize(audio, want) if audio is not None else None  # looped like the picture
    return write_video(dst, frames(), fps=info.fps, audio=sound)
