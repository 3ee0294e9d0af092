"""Precision and recall of the "real human" verdict per L1 track, beside the old method (every detected face
is a person), on labelled clips: the shared real clips (5 people; as they are and re-encoded smaller, harder
compressed, brighter, mirrored) and clips of faces that are not persons made by hvbench_assets_tests/face_kinds.py
(OpenCV-drawn cartoon faces, the real clips turned into cartoons, a photo on a moving card, a clip on a TV set,
a stone statue). Every clip goes through the real L1 tracker; each track it keeps is one item, labelled by its clip.

Figures are held out: leave-one-group-out cross-validation of the logistic regression, a group being the shared
clip an item was made from (each drawn face is its own group), so no score comes from a model that saw that
clip's people or pictures. five_people_grid shows the other three clips' people, so its group is not fully
unseen: the figures without it are printed too. `--write-model` fits on every item and writes
core/vision/real_human_model.json (the committed coefficients).

Run: PYTHONPATH=. .venv/bin/python benchmarks/real_humans.py [--work DIR] [--write-model] [--drawn N] [--features a,b]
     PYTHONPATH=. .venv/bin/python benchmarks/real_humans.py --speed   (statistics time as a ratio to L1's)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hvbench_assets.core.vision import realness  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.pipeline import track_video  # noqa: E402
from hvbench_assets_tests.face_kinds import KINDS, labelled_items  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
MODEL_PATH = ROOT / "hvbench_assets" / "core" / "vision" / "real_human_model.json"
LOG_FEATURES = ("grain", "nonrigid")  # heavy-tailed: logged before standardising
# saturation and nonrigid are measured and stored but not weighted: with them the held-out real recall fell
# (0.88 vs 0.96 at the threshold below), the warm-lit real clips are saturated and still listeners move little
MODEL_FEATURES = ("colours", "flat", "grain", "outline", "skin", "chroma")
C = 0.3  # inverse L2 strength: small, few items
THRESHOLD = 0.4  # below 0.5: a real person dropped loses all their questions; drawings and statues score < 0.3
MODEL_VERSION = "2"  # bump when the features, the labelled set, C or the threshold change


def collect(work: Path, n_drawn: int) -> list[dict]:
    """One row per L1 track: item, kind, group, label and the face statistics (cached per clip in work/tracks/)."""
    backend = build_backend("offline")
    rows = []
    (work / "tracks").mkdir(parents=True, exist_ok=True)
    for item in labelled_items(SHARED, work / "clips", n_drawn=n_drawn):
        cache = work / "tracks" / f"{item.name}.json"
        if not cache.exists():
            res = track_video(item.path, work / "l1" / item.name, backend)
            cache.write_text(json.dumps([
                {"item": item.name, "kind": item.kind, "group": item.source or item.name, "human": item.human,
                 "track_id": tr["track_id"], "face_px": tr["face_size_median"],
                 "features": realness.face_statistics(realness.sample_pairs(tr["face_clip_path"]))}
                for tr in res.tracks]))
            print(f"  {item.name}: {len(res.tracks)} track(s)", file=sys.stderr)
        rows += json.loads(cache.read_text())
    return rows


def _matrix(rows: list[dict]) -> np.ndarray:
    return np.array([[np.log1p(r["features"][f]) if f in LOG_FEATURES else r["features"][f]
                      for f in MODEL_FEATURES] for r in rows])


def fit(rows: list[dict], version: str) -> dict:
    from sklearn.linear_model import LogisticRegression

    x, y = _matrix(rows), np.array([r["human"] for r in rows], int)
    mean, scale = x.mean(0), x.std(0) + 1e-9
    lr = LogisticRegression(C=C, class_weight="balanced", max_iter=2000).fit((x - mean) / scale, y)
    f = list(MODEL_FEATURES)
    return {"version": version, "features": f, "log": [x for x in LOG_FEATURES if x in f], "threshold": THRESHOLD,
            "coef": dict(zip(f, np.round(lr.coef_[0], 5).tolist())), "intercept": round(float(lr.intercept_[0]), 5),
            "mean": dict(zip(f, np.round(mean, 6).tolist())), "scale": dict(zip(f, np.round(scale, 6).tolist())),
            "C": C, "class_weight": "balanced", "n_items": len(rows),
            "fitted_by": "benchmarks/real_humans.py --write-model"}


def held_out_scores(rows: list[dict]) -> np.ndarray:
    """Each track's score from a model fitted without its group."""
    groups = sorted({r["group"] for r in rows})
    scores = np.zeros(len(rows))
    for g in groups:
        train = [r for r in rows if r["group"] != g]
        model = fit(train, "cv")
        for i, r in enumerate(rows):
            if r["group"] == g:
                scores[i] = realness.stats_score(r["features"], model)[0]
    return scores


def pr(pred: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    tp = int((pred & truth).sum())
    return (tp / pred.sum() if pred.sum() else float("nan")), (tp / truth.sum() if truth.sum() else float("nan"))


def report(title: str, rows: list[dict], scores: np.ndarray) -> None:
    y = np.array([r["human"] for r in rows], bool)
    new = scores >= THRESHOLD
    old = np.ones(len(rows), bool)
    print(f"\n{title}: {len(rows)} tracks ({int(y.sum())} real, {int((~y).sum())} not persons)")
    print(f"threshold {THRESHOLD}, statistics weighted: {', '.join(MODEL_FEATURES)}")
    print(f"{'method':<44} {'real P':>7} {'real R':>7} {'not-person P':>13} {'not-person R':>13} {'acc':>6}")
    for name, pred in (("old: every detected face is a person", old), ("face statistics (held out)", new)):
        p, r = pr(pred, y)
        pn, rn = pr(~pred, ~y)
        print(f"{name:<44} {p:7.2f} {r:7.2f} {pn:13.2f} {rn:13.2f} {(pred == y).mean():6.2f}")
    for kind in KINDS:
        sel = [i for i, r in enumerate(rows) if r["kind"] == kind]
        if sel:
            right = sum(new[i] == y[i] for i in sel)
            print(f"  {kind:<8} {right}/{len(sel)} right  (scores {', '.join(f'{scores[i]:.2f}' for i in sel[:12])}"
                  f"{', ...' if len(sel) > 12 else ''})")


def speed(work: Path) -> None:
    """The verdict's statistics per clip as a ratio to L1 tracking of the same clip, in this process."""
    backend = build_backend("offline")
    for name in ("man_talking_head.mp4", "two_children.mp4", "two_people_talking.mp4"):
        t0 = time.perf_counter()
        res = track_video(SHARED / name, work / "speed" / name, backend)
        t1 = time.perf_counter()
        for tr in res.tracks:
            realness.face_statistics(realness.sample_pairs(tr["face_clip_path"]))
        t2 = time.perf_counter()
        print(f"{name}: {len(res.tracks)} tracks, verdict statistics {t2 - t1:.2f} s = {(t2 - t1) / (t1 - t0):.2f}x L1")


def main() -> None:
    global MODEL_FEATURES
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/real_humans_bench"))
    ap.add_argument("--drawn", type=int, default=16)
    ap.add_argument("--features", default=",".join(MODEL_FEATURES), help="comma-separated statistics to weight")
    ap.add_argument("--write-model", action="store_true")
    ap.add_argument("--speed", action="store_true", help="only time the statistics against L1 on the shared clips")
    args = ap.parse_args()
    MODEL_FEATURES = tuple(args.features.split(","))
    if args.speed:
        return speed(args.work)
    t0 = time.perf_counter()
    rows = collect(args.work, args.drawn)
    t1 = time.perf_counter()
    scores = held_out_scores(rows)
    report("all tracks, leave-one-source-clip-out", rows, scores)
    keep = [i for i, r in enumerate(rows) if r["group"] != "five_people_grid.mp4"]
    report("without five_people_grid's group", [rows[i] for i in keep], scores[keep])
    wrong = [(rows[i]["item"], rows[i]["track_id"], round(float(scores[i]), 2)) for i in range(len(rows))
             if (scores[i] >= THRESHOLD) != rows[i]["human"]]
    print(f"\nwrong (held out): {wrong}")
    print(f"\nL1 + statistics of the clips not cached yet: {t1 - t0:.0f} s (cache: {args.work}/tracks/)")
    if args.write_model:
        model = fit(rows, MODEL_VERSION)
        MODEL_PATH.write_text(json.dumps(model, indent=1) + "\n")
        print(f"wrote {MODEL_PATH}: {model['coef']}")




if __name__ == "__main__":
    main()
