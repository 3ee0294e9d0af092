"""Body (person) boxes of offline L1: YOLOX-nano person detections against the face-geometry estimate that
L1 stored before, on hand-labelled frames (benchmarks/person_boxes.json) and frames without any person.

Frames: 16 frames of ../shared/videos with every person boxed by hand (including people who show no face:
the adult torso of two_children, a head hidden behind someone), scikit-image's sample pictures (two with a
person, the rest without) and drawn scenes without people (a house, trees, a car, a snowman), made here.
A box counts when it overlaps a labelled person with IoU >= 0.5 (one to one, best IoU first); boxes on
`ignore` labels count neither way. Recall is split by whether the person shows a face; for people
with a face, also the mean IoU of the best box (IoU:f) and the share boxed at IoU >= 0.75 (close-ups cut
by the frame border make IoU >= 0.5 easy even for a guessed box). Methods, each on
the same frames:
- before: YuNet faces as L1 finds them, each with `estimate_body` (what offline L1 stored until now);
- detector: YOLOX-nano person boxes, every box it returns (at several score thresholds);
- after: the body box L1 now stores on a detection frame: per YuNet face the person box the paper's rule
  matches (body.match_body), else the estimate; persons with no face get no box (as on the full profile).
Person counts: frames whose number of boxes equals the labelled number, and mean absolute difference.
With --tracks, the stored rows of L1 itself (track_video) are scored on the labelled clip frames, and
its cost per second of video is printed beside the old L1 in the same process, for person detection on
every face-detection frame (6/s) and on every third (2/s).

Run: PYTHONPATH=. .venv/bin/python benchmarks/body_boxes.py [--tracks]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baselines import plain_decode  # noqa: E402
from hvbench_assets.core.media import iter_frames  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.body import estimate_body, match_body  # noqa: E402
from hvbench_assets.core.vision.boxes import iou  # noqa: E402
from hvbench_assets.core.vision.detectors import YoloxPersonDetector  # noqa: E402
from hvbench_assets.core.vision.pipeline import TrackingParams, detect_faces, track_video  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
LABELS = Path(__file__).with_name("person_boxes.json")
THRESHOLDS = (0.2, 0.3, 0.4, 0.5)


@dataclass
class Frame:
    name: str
    image: np.ndarray
    persons: list[tuple[tuple[float, ...], str]]  # (box, kind)

    @property
    def wanted(self) -> list[tuple[tuple[float, ...], str]]:
        return [p for p in self.persons if p[1] != "ignore"]


def labelled_frames(videos: Path = SHARED) -> list[Frame]:
    labels = json.loads(LABELS.read_text())
    out = []
    by_clip: dict[str, list[dict]] = {}
    for f in labels["frames"]:
        by_clip.setdefault(f["clip"], []).append(f)
    for clip, frames in by_clip.items():
        want = {f["frame"]: f for f in frames}
        for fr in iter_frames(videos / clip):
            if fr.index in want:
                f = want[fr.index]
                if list(fr.image.shape[1::-1]) != f["size"]:
                    raise ValueError(f"{clip} frame {fr.index}: size {fr.image.shape[1::-1]} != labelled {f['size']}")
                out.append(Frame(f"{Path(clip).stem}@{fr.index}", fr.image,
                                 [(tuple(p["box"]), p["kind"]) for p in f["persons"]]))
            if fr.index >= max(want):
                break
    for p in labels["pictures"]:
        out.append(Frame(f"skimage.{p['name']}", skimage_bgr(p["name"]),
                         [(tuple(x["box"]), x["kind"]) for x in p["persons"]]))
    out += [Frame(f"drawn.{name}", img, []) for name, img in drawn_scenes().items()]
    return out


def skimage_bgr(name: str) -> np.ndarray:
    import skimage.data

    im = getattr(skimage.data, name)()
    im = np.asarray(im[0] if isinstance(im, tuple) else im)
    if im.dtype == bool:
        im = im.astype(np.uint8) * 255
    if im.ndim == 2:
        return cv2.cvtColor(im, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(im, cv2.COLOR_RGBA2BGR if im.shape[2] == 4 else cv2.COLOR_RGB2BGR)


def drawn_scenes() -> dict[str, np.ndarray]:
    """Flat-colour drawings without people: a street (house, trees, a car, sun, clouds) and a garden with
    a snowman (a round, upright figure: the hard case)."""
    def sky(h=480, w=720):
        img = np.zeros((h, w, 3), np.uint8)
        img[:] = (235, 200, 150)
        img[int(h * 0.65):] = (60, 160, 70)
        cv2.circle(img, (620, 80), 45, (40, 220, 255), -1)
        for x in (120, 380):
            for dx, r in ((0, 28), (30, 34), (62, 26)):
                cv2.circle(img, (x + dx, 90), r, (250, 250, 250), -1)
        return img

    street = sky()
    cv2.rectangle(street, (80, 200), (300, 330), (60, 90, 200), -1)
    cv2.fillPoly(street, [np.array([(60, 200), (190, 110), (320, 200)])], (40, 40, 140))
    cv2.rectangle(street, (170, 260), (215, 330), (30, 60, 110), -1)
    for x in (100, 235):
        cv2.rectangle(street, (x, 220), (x + 45, 255), (230, 220, 150), -1)
    for x in (380, 470):
        cv2.rectangle(street, (x - 10, 240), (x + 10, 330), (30, 70, 110), -1)
        cv2.circle(street, (x, 215), 45, (40, 130, 40), -1)
    cv2.rectangle(street, (520, 330), (700, 380), (200, 60, 60), -1)
    cv2.rectangle(street, (550, 300), (660, 332), (200, 60, 60), -1)
    for x in (560, 665):
        cv2.circle(street, (x, 385), 20, (30, 30, 30), -1)
    garden = sky()
    for y, r in ((380, 70), (280, 50), (205, 35)):
        cv2.circle(garden, (360, y), r, (245, 245, 245), -1)
        cv2.circle(garden, (360, y), r, (150, 150, 150), 2)
    cv2.circle(garden, (348, 198), 4, (20, 20, 20), -1)
    cv2.circle(garden, (372, 198), 4, (20, 20, 20), -1)
    cv2.fillPoly(garden, [np.array([(360, 207), (395, 212), (360, 216)])], (0, 120, 255))
    cv2.rectangle(garden, (330, 150), (390, 172), (30, 30, 30), -1)
    cv2.line(garden, (315, 270), (250, 230), (40, 60, 90), 4)
    cv2.line(garden, (405, 270), (470, 230), (40, 60, 90), 4)
    cv2.rectangle(garden, (100, 300), (130, 420), (30, 70, 110), -1)
    cv2.circle(garden, (115, 270), 55, (40, 130, 40), -1)
    return {"street": street, "snowman": garden}


def score(frames: list[Frame], predict) -> dict:
    """Precision / recall at IoU >= 0.5 and person-count agreement of `predict(frame) -> boxes`."""
    tp = fp = 0
    found = {"face": 0, "no_face": 0}
    total = {"face": 0, "no_face": 0}
    exact, diffs, neg_frames, neg_boxes, best = 0, [], 0, 0, []
    for fr in frames:
        boxes = predict(fr)
        wanted = fr.wanted
        best += [max((iou(b, p[0]) for b in boxes), default=0.0) for p in wanted if p[1] == "face"]
        for _, kind in wanted:
            total[kind] += 1
        pairs = sorted(((iou(b, p[0]), i, j) for i, b in enumerate(boxes) for j, p in enumerate(wanted)), reverse=True)
        used_b, used_p = set(), set()
        for v, i, j in pairs:
            if v < 0.5 or i in used_b or j in used_p:
                continue
            used_b.add(i)
            used_p.add(j)
            found[wanted[j][1]] += 1
        ignored = [p[0] for p in fr.persons if p[1] == "ignore"]
        extra = [b for i, b in enumerate(boxes) if i not in used_b and not any(iou(b, g) >= 0.5 for g in ignored)]
        tp += len(used_b)
        fp += len(extra)
        n = len(used_b) + len(extra)
        exact += n == len(wanted)
        diffs.append(abs(n - len(wanted)))
        if not wanted:
            neg_frames += 1
            neg_boxes += n > 0
    return {"precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": sum(found.values()) / max(1, sum(total.values())),
            "recall_face": found["face"] / max(1, total["face"]),
            "recall_no_face": found["no_face"] / max(1, total["no_face"]),
            "count_exact": exact / len(frames), "count_mae": float(np.mean(diffs)),
            "neg_false": f"{neg_boxes}/{neg_frames}", "fp": fp, "tp": tp, "n": sum(total.values()),
            "iou_face": float(np.mean(best)) if best else 0.0, "tight_face": float(np.mean([v >= 0.75 for v in best])) if best else 0.0}


def _row(name: str, s: dict) -> str:
    return (f"{name:<44} {s['precision']:5.2f} {s['recall']:5.2f} {s['recall_face']:6.2f} {s['recall_no_face']:8.2f} "
            f"{s['iou_face']:6.2f} {s['tight_face']:6.2f} {s['count_exact']:6.2f} {s['count_mae']:5.2f} {s['neg_false']:>7}")


def frame_scores(frames: list[Frame]) -> None:
    old = build_backend("offline", person_detector="none")
    faces: dict[str, list] = {}
    t0 = time.perf_counter()
    for fr in frames:
        faces[fr.name] = [d.box for d in detect_faces(fr.image, old)]
    t_face = (time.perf_counter() - t0) / len(frames)
    det = YoloxPersonDetector(conf=min(THRESHOLDS))
    scored: dict[str, list] = {}
    t0 = time.perf_counter()
    for fr in frames:
        scored[fr.name] = det.detect_scored(fr.image)
    t_person = (time.perf_counter() - t0) / len(frames)

    def estimated(fr):
        h, w = fr.image.shape[:2]
        return [estimate_body(f, w, h) for f in faces[fr.name]]

    def persons(conf):
        return lambda fr: [b for b, s in scored[fr.name] if s > conf]

    def l1_after(conf):
        def predict(fr):
            h, w = fr.image.shape[:2]
            cand = persons(conf)(fr)
            out = []
            for f in faces[fr.name]:
                i = match_body(f, cand)
                out.append(cand[i] if i is not None else estimate_body(f, w, h))
            return out
        return predict

    n_faces = sum(len(fr.wanted) for fr in frames if fr.name.split(".")[0] not in ("skimage", "drawn"))
    print(f"{len(frames)} frames: {sum(1 for fr in frames if fr.wanted)} with people ({sum(len(fr.wanted) for fr in frames)} "
          f"persons, {n_faces} on clip frames), {sum(1 for fr in frames if not fr.wanted)} without any person")
    print(f"{'method':<44} {'prec':>5} {'rec':>5} {'rec:face':>6} {'rec:no_face':>8} {'IoU:f':>6} {'>=.75':>6} {'count=':>6} {'|dn|':>5} {'neg.fp':>7}")
    print(_row("before: face-estimated (YuNet + estimate)", score(frames, estimated)))
    for conf in THRESHOLDS:
        print(_row(f"detector: YOLOX-nano persons, score > {conf}", score(frames, persons(conf))))
    for conf in THRESHOLDS:
        print(_row(f"after: L1 body per face (YOLOX > {conf})", score(frames, l1_after(conf))))
    print(f"time per frame: YuNet faces {t_face * 1000:.1f} ms, YOLOX-nano persons {t_person * 1000:.1f} ms "
          f"({t_person / t_face:.2f}x the face pass, same process, one thread each)")


def track_scores(frames: list[Frame], videos: Path = SHARED) -> None:
    clip_frames = [fr for fr in frames if "@" in fr.name]
    clips = sorted({fr.name.split("@")[0] for fr in clip_frames})
    runs = {"before: L1, estimated bodies": (build_backend("offline", person_detector="none"), TrackingParams()),
            "after: L1, YOLOX on 6 frames/s": (build_backend("offline"), TrackingParams(person_fps=6.0)),
            "after: L1, YOLOX on 2 frames/s": (build_backend("offline"), TrackingParams(person_fps=2.0))}
    stored: dict[str, dict[str, list]] = {name: {} for name in runs}
    cost: dict[str, list[float]] = {name: [] for name in runs}
    person_s: dict[str, list[float]] = {name: [] for name in runs}
    decode: list[float] = []
    sources: dict[str, dict] = {name: {} for name in runs}
    for clip in clips:
        src = videos / f"{clip}.mp4"
        decode.append(plain_decode(src))
        for name, (be, params) in runs.items():
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                res = track_video(src, Path(tmp) / "t", be, params)
                wall = time.perf_counter() - t0
            dur = res.frame_count / res.fps
            cost[name].append(wall / dur)
            person_s[name].append(res.timings.get("persons", 0.0) / dur)
            for b in res.boxes:
                stored[name].setdefault(f"{clip}@{b['frame']}", []).append(
                    (b["body_x1"], b["body_y1"], b["body_x2"], b["body_y2"]))
                sources[name][b["body_source"]] = sources[name].get(b["body_source"], 0) + 1
            sources[name][f"faceless:{clip}"] = res.faceless_bodies
    print(f"\nL1 rows (track_video) on the {len(clip_frames)} labelled clip frames; cost per second of video on "
          f"{', '.join(clips)} (median over clips; plain PyAV decode {statistics.median(decode):.3f} s for comparison)")
    print(f"{'method':<44} {'prec':>5} {'rec':>5} {'rec:face':>6} {'rec:no_face':>8} {'IoU:f':>6} {'>=.75':>6} "
          f"{'count=':>6} {'|dn|':>5}  L1 s/clip-s  persons s/clip-s")
    base = statistics.median(cost["before: L1, estimated bodies"])
    for name in runs:
        s = score(clip_frames, lambda fr, name=name: stored[name].get(fr.name, []))
        c, p = statistics.median(cost[name]), statistics.median(person_s[name])
        print(_row(name, s)[:-8] + f"  {c:6.3f} ({c / base:.2f}x)  {p:.3f} ({p / base:.2f}x the old L1)")
    print("  (the wall times drift with the load of the shared machine; the persons column is the detector's own time)")
    for name in runs:
        print(f"  {name}: body_source rows {sources[name]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracks", action="store_true", help="also run L1 on the shared clips (about 2 minutes)")
    args = ap.parse_args()
    if not LABELS.is_file() or not SHARED.is_dir():
        sys.exit(f"needs {LABELS} and the shared clips in {SHARED}")
    frames = labelled_frames()
    frame_scores(frames)
    if args.tracks:
        track_scores(frames)


if __name__ == "__main__":
    main()
