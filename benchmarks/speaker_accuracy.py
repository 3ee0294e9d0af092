"""Per-track precision and recall of the offline speaker label (L7) on composites of real talking heads.

Run: .venv/bin/python benchmarks/speaker_accuracy.py [--fixed-crops] [scene ...]

Each scene puts single talking heads cut from ../shared/videos side by side (the man of man_talking_head,
the woman facing the camera in two_people_talking, the two girls of two_children) with a chosen sound: one
voice, two voices, silence, or a face frozen on its first frame (see hvbench_assets_tests/core/speakers/
composites.py). Ground truth per panel: it speaks when its own voice is heard and its face moves; the girl
braiding the woman's hair, partly visible at the woman's crop edge, never speaks (`woman-bystander`). The
real five_people_grid clip (only the man's voice) and man_talking_head are scored too, and
two_people_talking, where the front woman (the biggest face) is ASD's answer.

By default every composite goes through the real L1 tracker (face crops as `human_tracks` makes them) and
then the scorer, all tracks of a clip together; `--fixed-crops` skips L1 and scores each single-face panel
as a fixed crop (fast, no children panel)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hvbench_assets.core.media import iter_frames, load_audio  # noqa: E402
from hvbench_assets.core.speakers.lipsync import LipSyncScorer  # noqa: E402
from hvbench_assets.core.speakers.scoring import TrackFrames, clip_rows  # noqa: E402
from hvbench_assets_tests.core.speakers.composites import (  # noqa: E402
    FPS,
    SCENES,
    Scene,
    build_scene,
    panel_crops,
    face_truth,
    scene_audio,
)

SHARED = ROOT.parent / "shared" / "videos"
SECONDS = 4.0


def tracked(path: Path, work: Path) -> tuple[list[TrackFrames], dict[int, float], float]:
    """L1 tracks of a clip as the asset stores them, with each track's mean face centre x."""
    from hvbench_assets.core.vision.backends import build_backend
    from hvbench_assets.core.vision.pipeline import track_video

    res = track_video(path, work, build_backend("offline"))
    xs: dict[int, list[float]] = {}
    for b in res.boxes:
        xs.setdefault(b["track_id"], []).append((b["face_x1"] + b["face_x2"]) / 2)
    tracks = [TrackFrames(r["track_id"], r["first_frame"], r["last_frame"] - r["first_frame"] + 1,
                          lambda p=r["face_clip_path"]: (f.image for f in iter_frames(p)))
              for r in res.tracks if r.get("face_clip_path")]
    return tracks, {t: float(np.mean(v)) for t, v in xs.items()}, res.fps


def score_clip(path: Path, work: Path, truth_of) -> list[tuple[str, bool, bool, int, float]]:
    """(panel, truth, predicted, longest run, best score) per L1 track of a clip."""
    tracks, centre_x, fps = tracked(path, work)
    rows = clip_rows(LipSyncScorer(), tracks, load_audio(path), fps)
    out = []
    for r in rows:
        panel, truth = truth_of(centre_x[r["track_id"]])
        out.append((panel, truth, bool(r["speaking"]), r.get("longest_run") or 0, max(r.get("scores") or [-1.0])))
    return out


def score_scene(scene: Scene, work: Path, fixed_crops: bool) -> list[tuple[str, bool, bool, int]]:
    truth = scene.speaking()
    if fixed_crops:
        crops = panel_crops(scene, SHARED, SECONDS)
        tracks = [TrackFrames(i, 0, len(f), lambda f=f: iter(f)) for i, f in enumerate(crops.values())]
        rows = clip_rows(LipSyncScorer(), tracks, scene_audio(scene, SHARED, SECONDS), FPS)
        return [(name, name in truth, bool(r["speaking"]), r.get("longest_run") or 0, max(r["scores"] or [-1.0]))
                for name, r in zip(crops, rows)]
    clip = build_scene(scene, SHARED, work / f"{scene.name}.mp4", SECONDS)
    return score_clip(clip, work / scene.name, lambda x: face_truth(x, scene, SHARED))


def main(args: list[str]) -> None:
    fixed = "--fixed-crops" in args
    names = [a for a in args if not a.startswith("--")]
    scenes = [s for s in SCENES if not names or s.name in names]
    tp = fp = fn = tn = 0
    print(f"{'scene':22} {'truth':16} | per track: panel truth->predicted (longest run, best score)   [{'fixed crops' if fixed else 'L1 crops'}]")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = [(s.name, ",".join(sorted(s.speaking())) or "-", score_scene(s, work, fixed)) for s in scenes]
        if not fixed and not names:
            grid = SHARED / "five_people_grid.mp4"
            results.append(("five_people_grid", "man", score_clip(grid, work / "grid", lambda x: ("man" if x > 1120 else f"x{x:.0f}", x > 1120))))
            results.append(("man_talking_head", "man", score_clip(SHARED / "man_talking_head.mp4", work / "man", lambda x: ("man", True))))
            # not counted (truth per track unknown: she hardly talks before 11 s, short tracks are unclear);
            # ASD needs her (face centre x < 240 of 480) flagged and not the braiding girl (x > 300)
            results.append(("two_people_talking", "front", score_clip(SHARED / "two_people_talking.mp4", work / "tpt",
                                                                      lambda x: (f"x{x:.0f}", None))))
    for name, truth, rows in results:
        cells = []
        for panel, want, got, run, best in rows:
            if want is not None:
                tp += want and got
                fp += got and not want
                fn += want and not got
                tn += not want and not got
            cells.append(f"{panel} {'?' if want is None else 'S' if want else '-'}->{'S' if got else '-'}({run}, {best:+.2f})"
                         f"{'' if want in (None, got) else ' WRONG'}")
        print(f"{name:22} {truth:16} | " + "; ".join(cells))
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    print(f"\ncounted tracks: {tp + fp + fn + tn}  speaking truth: {tp + fn}  flagged: {tp + fp}")
    print(f"precision {precision:.2f}  recall {recall:.2f}  (tp {tp}, fp {fp}, fn {fn}, tn {tn})  in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
