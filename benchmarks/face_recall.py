"""Face recall and precision of the offline L1 face detectors per face size, before (dlib HOG) and after
(libfacedetection YuNet), and what the L1 tracker makes of each on a 30 s phone-shaped clip with small faces.

The frames: hand-labelled frames of ../shared/videos and frames generated from them with boxes known by
construction (hvbench_assets/testkit/data/face_boxes.json, built by hvbench_assets/testkit/face_set.py: 362x640
frames with real faces pasted at 24-64 px, mirrored, rotated up to 30 degrees; 640x360 frames holding a
shrunk labelled frame). A detection counts when it overlaps a labelled face with IoU >= 0.3 (one to one);
boxes on `ignore` faces (mostly hidden) count neither way. Detector time is per frame and as a ratio to
dlib HOG on the same frames in this process (the machine is shared, so absolute times drift). Frames are scored as
L1's full passes: its quick 320 px pass between them runs only while every tracked face is large (see
TrackingParams.quick_max_side; the `YuNet at 320 px` candidate shows what it finds per face size).

Run: .venv/bin/python benchmarks/face_recall.py [--candidates] [--no-clip]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baselines import plain_decode  # noqa: E402
from hvbench_assets.core.media import probe_video  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.boxes import overlaps  # noqa: E402
from hvbench_assets.core.vision.count import TrackSpan, count_people  # noqa: E402
from hvbench_assets.core.vision.pipeline import detect_faces, track_video  # noqa: E402
from hvbench_assets.testkit.face_set import (  # noqa: E402
    Tally,
    bucket_names,
    bucket_of,
    generated_frames,
    portrait_clip,
    real_frames,
    score_frame,
)

SHARED = ROOT.parent / "shared" / "videos"


def _dedup(boxes):
    kept = []
    for b in boxes:
        if not any(overlaps(b, k) for k in kept):
            kept.append(b)
    return kept


def detectors(candidates: bool) -> dict:
    hog, yunet = build_backend("offline", face_detector="hog"), build_backend("offline")
    out = {
        "before: HOG, ordinary L1 frame": lambda im: [d.box for d in detect_faces(im, hog)],
        "before: HOG, + fine pass + rescue": lambda im: [d.box for d in detect_faces(im, hog, fine=True, whole=True)],
        "after: YuNet, every L1 frame": lambda im: [d.box for d in detect_faces(im, yunet)],
    }
    if candidates:
        from hvbench_assets.core.vision.detectors import DlibMmodFaceDetector, YuNetFaceDetector

        profile = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_profileface.xml")
        frontal = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")
        mmod, yu = DlibMmodFaceDetector(upsample=0), YuNetFaceDetector()

        def shrink(im, side):
            k = min(1.0, side / max(im.shape[:2]))
            return (cv2.resize(im, None, fx=k, fy=k, interpolation=cv2.INTER_AREA) if k < 1 else im), k

        def haar(im, both_ways=True):
            small, k = shrink(im, 640)
            gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
            boxes = [(x / k, y / k, (x + w) / k, (y + h) / k) for x, y, w, h in frontal.detectMultiScale(gray, 1.1, 5, minSize=(16, 16))]
            for flip in (False, True):
                g = cv2.flip(gray, 1) if flip else gray
                for x, y, w, h in profile.detectMultiScale(g, 1.1, 5, minSize=(16, 16)):
                    x = gray.shape[1] - x - w if flip else x
                    boxes.append((x / k, y / k, (x + w) / k, (y + h) / k))
            return boxes

        def scaled(det, side):
            def run(im):
                small, k = shrink(im, side)
                return [tuple(v / k for v in d.box) for d in det.detect(small)]
            return run

        out.update({
            "candidate: Haar frontal + profile (both ways)": haar,
            "candidate: HOG all passes + Haar": lambda im: [d.box for d in detect_faces(im, hog, fine=True, whole=True)] + haar(im),
            "candidate: dlib mmod CNN at 640 px": scaled(mmod, 640),
            "candidate: YuNet at 480 px": scaled(yu, 480),
            "candidate: YuNet at 320 px": scaled(yu, 320),
        })
    return out


def measure(frames, fn):
    by_size, by_pose, by_kind, total = defaultdict(Tally), defaultdict(Tally), defaultdict(Tally), Tally()
    seconds = 0.0
    for fr in frames:
        t = time.perf_counter()
        boxes = _dedup(fn(fr.image))
        seconds += time.perf_counter() - t
        found, false = score_frame(fr.faces, boxes)
        for face, ok in found:
            for tally in (by_size[bucket_of(face.width)], by_pose[face.pose], by_kind[fr.kind], total):
                tally.tp += ok
                tally.fn += not ok
        for b in false:
            for tally in (by_size[bucket_of(b[2] - b[0])], by_kind[fr.kind], total):
                tally.fp += 1
    return seconds / len(frames), by_size, by_pose, by_kind, total


def _pct(v):
    return "  -  " if v is None else f"{v:5.2f}"


def clip_run(path: Path, work: Path):
    """L1 with each detector on one clip: tracks, people, face presence, seconds per video second and the
    ratio to a plain decode of the same clip measured just before."""
    info = probe_video(path)
    print(f"\n{path.name}: {info.width}x{info.height}, {info.duration_s:.1f} s")
    print(f"{'L1 face detector':34} {'tracks':>6} {'people':>6} {'presence':>8} {'s/video-s':>9} {'x decode':>8}")
    for name, backend in (("before: HOG + rescue", build_backend("offline", face_detector="hog")),
                          ("after: YuNet", build_backend("offline"))):
        base = plain_decode(path, repeat=2)
        t = time.perf_counter()
        res = track_video(path, work / name.split(":")[0], backend)
        dt = time.perf_counter() - t
        people = count_people([TrackSpan(r["track_id"], r["first_frame"], r["last_frame"], r["face_embedding"])
                               for r in res.tracks]).count
        print(f"{name:34} {len(res.tracks):6d} {people:6d} {res.face_presence:8.2f} {dt / info.duration_s:9.3f} {dt / base:8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", action="store_true", help="also measure the detectors that were not chosen")
    ap.add_argument("--no-clip", action="store_true", help="skip the L1 runs on whole clips")
    ap.add_argument("--only", nargs="*", default=None, metavar="WORD",
                    help="measure only detectors whose name contains one of these words (e.g. YuNet Haar)")
    ap.add_argument("--no-frames", action="store_true", help="skip the labelled frames (only the L1 runs)")
    args = ap.parse_args()
    if not (SHARED / "two_people_talking.mp4").exists():
        sys.exit(f"the shared clips are missing: {SHARED}")
    if not args.no_frames:
        frame_table(args.candidates, args.only)
    if not args.no_clip:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            clip = portrait_clip(SHARED, work / "portrait_small_faces.mp4", seconds=30.0)
            clip_run(clip, work)
            clip_run(SHARED / "two_people_talking.mp4", work)


def frame_table(candidates: bool, only: list[str] | None = None) -> None:
    real = real_frames(SHARED)
    frames = real + generated_frames(real, SHARED)
    counts = defaultdict(int)
    for fr in frames:
        for f in fr.faces:
            if f.pose != "ignore":
                counts[bucket_of(f.width)] += 1
    print(f"{len(frames)} frames ({len(real)} hand-labelled, {len(frames) - len(real)} generated), "
          f"{sum(counts.values())} faces; per width bucket: " + ", ".join(f"{b} px: {counts[b]}" for b in bucket_names()))
    print("cells: recall / precision; face width in px of the labelled box (of the detection for false ones)\n")
    head = f"{'detector':46} {'ms/frame':>8} {'x HOG':>6} " + " ".join(f"{b:>13}" for b in bucket_names())
    print(head + f" {'all':>13} {'frontal':>7} {'turned':>7} {'real':>11} {'portrait':>11} {'wide':>11}")
    hog_ms = None
    for name, fn in detectors(candidates).items():
        if only and not any(w.lower() in name.lower() for w in only) and not name.startswith("before: HOG, ordinary"):
            continue  # HOG's ordinary frame stays: the time column is relative to it
        ms, by_size, by_pose, by_kind, total = measure(frames, fn)
        hog_ms = hog_ms or ms
        cells = " ".join(f"{_pct(by_size[b].recall)}/{_pct(by_size[b].precision)}".rjust(13) for b in bucket_names())
        kinds = " ".join(f"{_pct(by_kind[k].recall)}/{_pct(by_kind[k].precision)}" for k in ("real", "portrait", "wide"))
        print(f"{name:46} {1000 * ms:8.1f} {ms / hog_ms:6.2f} {cells} {_pct(total.recall)}/{_pct(total.precision)}"
              f" {_pct(by_pose['frontal'].recall):>7} {_pct(by_pose['turned'].recall):>7} {kinds}", flush=True)


if __name__ == "__main__":
    main()
