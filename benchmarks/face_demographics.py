"""Accuracy of the offline L3 demographics (gender, child/adult) against the old offline backend (no model:
`unavailable`, i.e. no answer), per face crop and per L1 track.

Labelled items:
- frames: every hand-labelled face box of ../shared/videos (hvbench_assets_tests/data/face_boxes.json, pose
  `ignore` left out) cut as L1 cuts its face clips (a square of 1.5 x the box, 224 px), plus the faces YuNet
  finds in scikit-image's `astronaut` (Eileen Collins: female adult) and `camera` (the cameraman: male adult).
  Truth from the clips' README: two_people_talking two young women, two_children two little girls,
  man_talking_head a man; five_people_grid by panel (x < 480, < 1120, else).
- tracks: the L1 tracks of the four shared clips (offline YuNet tracker), truth by clip and panel as above;
  each track is summarised from `--samples` crops of its face clip with the confidence rule of L3.

Run: PYTHONPATH=. .venv/bin/python benchmarks/face_demographics.py [--work DIR] [--samples 8]
(`--work` keeps the L1 tracks between runs.) Speed: each estimator's L3 time over all tracks against reading the
same sampled crops without a model (the old offline path decoded nothing; the full path decodes these crops).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.media.crops import crop_to  # noqa: E402
from hvbench_assets.core.vision import HUMAN_TRACK_BOXES, HUMAN_TRACKS, load_tracks  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.boxes import square_around  # noqa: E402
from hvbench_assets.core.vision.demographics import (  # noqa: E402
    CHILD_BELOW_YEARS,
    FaceAttributes,
    L1_FACE_MARGIN,
    MEASURED,
    ConfidenceRule,
    build_estimator,
    demographics_rows,
)
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
CLIPS = ("man_talking_head.mp4", "two_children.mp4", "two_people_talking.mp4", "five_people_grid.mp4")
TRUTH = {"two_people_talking": ("female", "adult"), "two_children": ("female", "child"),
         "man_talking_head": ("male", "adult")}
# (name, margin): the estimators compared; margin = face-box share added per side before the model's resize
CANDIDATES = (("ssrnet", 0.1), ("ssrnet", 0.25), ("ssrnet", 0.4), ("utkface-tflite", 0.0), ("utkface-tflite", 0.1))


def truth_of(clip: str, x_centre: float) -> tuple[str, str]:
    """(gender, age class) of a face in `clip` centred at x (source pixels)."""
    if clip == "five_people_grid":
        clip = "two_people_talking" if x_centre < 480 else "two_children" if x_centre < 1120 else "man_talking_head"
    return TRUTH[clip]


def labelled_faces() -> list[tuple[str, np.ndarray, tuple[str, str]]]:
    """(name, L1-style 224 px face crop, truth) for every labelled face."""
    import skimage.data

    from hvbench_assets.core.vision.detectors import YuNetFaceDetector
    from hvbench_assets_tests.face_set import real_frames

    out = []
    for fr in real_frames(SHARED):
        for f in fr.faces:
            if f.pose == "ignore":
                continue
            crop = crop_to(fr.image, square_around(f.box, L1_FACE_MARGIN), 224, 224)
            out.append((fr.name, crop, truth_of(fr.name.split("@")[0], (f.box[0] + f.box[2]) / 2)))
    stills = {"astronaut": (cv2.cvtColor(skimage.data.astronaut(), cv2.COLOR_RGB2BGR), ("female", "adult")),
              "camera": (cv2.cvtColor(skimage.data.camera(), cv2.COLOR_GRAY2BGR), ("male", "adult"))}
    detector = YuNetFaceDetector()
    for name, (img, truth) in stills.items():
        for det in detector.detect(img)[:1]:
            out.append((name, crop_to(img, square_around(det.box, L1_FACE_MARGIN), 224, 224), truth))
    return out


def l1_tracks(work: Path) -> tuple[Warehouse, dict[str, list]]:
    """The L1 tracks of the shared clips (computed once per work folder)."""
    from hvbench_assets.core.vision.pipeline import track_video

    wh = Warehouse(work / "wh.duckdb")
    backend = None
    out = {}
    for clip in CLIPS:
        vid = Path(clip).stem
        if not wh.rows(HUMAN_TRACKS, video_id=vid):
            backend = backend or build_backend("offline")
            res = track_video(SHARED / clip, work / vid, backend)
            wh.replace(HUMAN_TRACKS, {"video_id": vid}, res.tracks)
            wh.replace(HUMAN_TRACK_BOXES, {"video_id": vid}, res.boxes)
        out[vid] = load_tracks(wh, vid)
    return wh, out


def track_truth(vid: str, track) -> tuple[str, str]:
    return truth_of(vid, float(np.mean([(b.face[0] + b.face[2]) / 2 for b in track.boxes])))


class CropReader:
    """Decodes the sampled crops and answers nothing: the time base for the estimators."""

    model = method = "crop-reader"
    measured_accuracy = measured_age_accuracy = None

    def analyze(self, faces):
        return [FaceAttributes(30.0, "-", None) for _ in faces]


def l3_seconds(tracks: dict, estimator, samples: int) -> tuple[float, list[tuple[dict, tuple[str, str], object]]]:
    t0 = time.perf_counter()
    out = []
    for vid, trs in tracks.items():
        rows = demographics_rows(trs, estimator, samples=samples, rule=ConfidenceRule(min_accuracy=0.0))
        out += [(r, track_truth(vid, tr), tr) for tr, r in zip(trs, rows)]
    return time.perf_counter() - t0, out


def frame_scores(estimator, faces) -> dict:
    attrs = estimator.analyze([c for _, c, _ in faces])
    g = [a is not None and a.gender == t[0] for a, (_, _, t) in zip(attrs, faces)]
    c = [a is not None and ("child" if a.age < CHILD_BELOW_YEARS else "adult") == t[1] for a, (_, _, t) in zip(attrs, faces)]
    male = [i for i, (_, _, t) in enumerate(faces) if t[0] == "male"]
    female = [i for i, (_, _, t) in enumerate(faces) if t[0] == "female"]
    return {"gender": np.mean(g), "male_recall": np.mean([g[i] for i in male]), "female_recall": np.mean([g[i] for i in female]),
            "age_class": np.mean(c), "child_recall": np.mean([c[i] for i, (_, _, t) in enumerate(faces) if t[1] == "child"])}


def _vote(row: dict, kind: str) -> tuple[str | None, float]:
    """(majority, share) of a row's `kind` votes (gender | age_class); the row may leave its gender out."""
    votes = (row.get("votes") or {}).get(kind) or {}
    if not votes:
        return None, 0.0
    label = max(votes, key=votes.get)
    return label, votes[label] / sum(votes.values())


def track_scores(rows_truth: list[tuple[dict, tuple[str, str]]], min_share: float) -> dict:
    """Majority accuracy over every track, and over the tracks whose vote is clear (share >= min_share), for
    gender and child/adult separately; `ok` = rows the default-share rule accepts with the accuracy gate off."""
    out = {"n": len(rows_truth), "ok": sum(r["status"] == "ok" for r, _ in rows_truth)}
    for kind, k in (("gender", 0), ("age_class", 1)):
        votes = [(_vote(r, kind), t[k]) for r, t in rows_truth if r.get("votes")]
        clear = [(lab, t) for (lab, share), t in votes if share >= min_share]
        out[f"vote_{kind}"] = np.mean([lab == t for (lab, _), t in votes]) if votes else float("nan")
        out[f"clear_{kind}"] = np.mean([lab == t for lab, t in clear]) if clear else float("nan")
        out[f"n_clear_{kind}"] = len(clear)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="face_demographics_"))
    work.mkdir(parents=True, exist_ok=True)
    faces = labelled_faces()
    _, tracks = l1_tracks(work)
    n_tracks = sum(len(v) for v in tracks.values())
    rule = ConfidenceRule(min_accuracy=0.0)  # measure: the accuracy gate must not hide what is measured
    print(f"labelled faces: {len(faces)} ({sum(t[0] == 'male' for _, _, t in faces)} male, "
          f"{sum(t[1] == 'child' for _, _, t in faces)} child); L1 tracks: {n_tracks} on {len(tracks)} clips; "
          f"track rule: vote share >= {rule.min_share}")
    print(f"{'estimator':24} | {'per crop: gender':>16} {'male':>5} {'female':>6} {'child/adult':>11} {'child':>5} | "
          f"{'per track: majority gender':>26} {'age':>5} | {'clear gender':>12} {'acc':>5} | {'clear age':>9} {'acc':>5} | ok")
    na = "  -  "
    print(f"{'old offline (unavailable)':24} | {'no answer':>16} {na:>5} {na:>6} {'no answer':>11} {na:>5} | "
          f"{'no answer':>26} {na:>5} | {f'0/{n_tracks}':>12} {na:>5} | {f'0/{n_tracks}':>9} {na:>5} | 0")
    base_s, _ = l3_seconds(tracks, CropReader(), args.samples)
    speeds, stale = [], []
    for name, margin in CANDIDATES:
        est = build_estimator(name, margin)
        f = frame_scores(est, faces)
        secs, results = l3_seconds(tracks, est, args.samples)
        speeds.append((f"{name} margin {margin}", secs))
        rows_truth = [(r, t) for r, t, _ in results]
        if args.verbose:
            for r, t, tr in results:
                print(f"    {name}@{margin} {tr.video_id} track {tr.track_id} ({tr.face_size_median:.0f} px): truth {t} -> "
                      f"{r['status']} {_vote(r, 'gender')} {r.get('age_class')} {r.get('age_confidence')} "
                      f"age {r.get('age') or 0:.1f} {r.get('reason') or ''}")
        t = track_scores(rows_truth, rule.min_share)
        got = (round(float(t["clear_gender"]), 2), round(float(t["clear_age_class"]), 2))
        if MEASURED.get((name, margin)) != got:
            stale.append(f"{name}@{margin}: measured {got}, MEASURED says {MEASURED.get((name, margin))}")
        print(f"{f'{name} margin {margin}':24} | {f['gender']:16.2f} {f['male_recall']:5.2f} {f['female_recall']:6.2f} "
              f"{f['age_class']:11.2f} {f['child_recall']:5.2f} | {t['vote_gender']:26.2f} {t['vote_age_class']:5.2f} | "
              f"{str(t['n_clear_gender']) + '/' + str(t['n']):>12} {t['clear_gender']:5.2f} | "
              f"{str(t['n_clear_age_class']) + '/' + str(t['n']):>9} {t['clear_age_class']:5.2f} | {t['ok']}")
    print(f"speed over {n_tracks} tracks x {args.samples} crops: reading the crops alone {base_s:.2f} s; "
          + "; ".join(f"{k} {v:.2f} s ({v / base_s:.2f}x)" for k, v in speeds))
    print("MEASURED in core/vision/demographics.py " + ("differs: " + "; ".join(stale) if stale else "matches these figures"))
    print("per track: majority = the track's vote over its sampled crops, every track; clear = tracks whose vote on it "
          "reaches the share, and their accuracy (the figures MEASURED records and the accuracy gate reads); ok = rows "
          "with the gate off")


if __name__ == "__main__":
    main()
