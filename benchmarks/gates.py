"""What the answer-key gates reject, measured.

1. Face gate on the shared clips: the offline L1 (YuNet, and dlib HOG with its rescue passes) tracks each
   clip; per track the face-detected share of the detection frames, and whether family.FACE_GATE skips it.
   The clips' ground truth (../shared/videos/README.md): every face there is visible, so a skipped track of
   these clips is a face wrongly skipped; a body-only track (no detected face frame) would be skipped.
   The gated families' selection verdicts are compared with and without the gate on the same tracks.
2. With `--warehouse PATH`: the stored questions of that warehouse re-checked, per task: how many the face
   gate would reject (a target or numbered track without a detected face) and how many fail the option
   checks (each family's `option_problems`: the option form of the six descriptive tasks, the length band for
   SCM, the wording for AST).

Run: PYTHONPATH=. .venv/bin/python benchmarks/gates.py [--detectors yunet,hog] [--warehouse wh.duckdb]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.ingest.tables import ClipInfo, load_clip  # noqa: E402
from hvbench_assets.core.media import probe_video  # noqa: E402
from hvbench_assets.core.tasks.faces import face_evidence, faceless, gate_tracks  # noqa: E402
from hvbench_assets.core.tasks.labels import ClipLabels  # noqa: E402
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS  # noqa: E402
from hvbench_assets.core.tasks.family import FACE_GATE  # noqa: E402
from hvbench_assets.core.tasks.store import QUESTIONS  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.pipeline import track_video  # noqa: E402
from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES, HUMAN_TRACKS, load_tracks  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402

CLIPS = ("two_children.mp4", "five_people_grid.mp4", "man_talking_head.mp4", "two_people_talking.mp4")
VIDEOS = ROOT.parent / "shared" / "videos"
GATED = [f for f in TASKS if f.face_gate is not None]


def clip_labels(wh: Warehouse, name: str, detector: str, out: Path) -> ClipLabels:
    """The offline L1 of one shared clip, stored and read back as the task layer reads it."""
    path = VIDEOS / name
    res = track_video(path, out / f"{detector}-{name}", build_backend("offline", face_detector=detector))
    vid = f"{detector}-{Path(name).stem}"
    wh.replace(HUMAN_TRACKS, {"video_id": vid}, [{**r, "video_id": vid, "status": "ok"} for r in res.tracks])
    wh.replace(HUMAN_TRACK_BOXES, {"video_id": vid}, [{**b, "video_id": vid} for b in res.boxes])
    info = probe_video(path)
    clip = ClipInfo(video_id=vid, path=path, duration_s=info.duration_s, fps=info.fps, frame_count=res.frame_count,
                    width=info.width, height=info.height, has_audio=info.has_audio, sha256="0" * 64)
    rows = {"human_tracks": wh.rows(HUMAN_TRACKS, video_id=vid, order_by="track_id"),
            "person_count": [{"status": "ok", "person_count": len(res.tracks), "persons": []}]}
    return ClipLabels(clip=clip, rows=rows, tracks=load_tracks(wh, vid))


def face_gate_on_shared_clips(detectors: list[str]) -> None:
    print(f"face gate {FACE_GATE} on the shared clips (offline L1)")
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse(Path(tmp) / "wh.duckdb")
        for det in detectors:
            shares, skipped, changed = [], 0, Counter()
            for name in CLIPS:
                if not (VIDEOS / name).exists():
                    print(f"  {name}: missing, skipped")
                    continue
                labels = clip_labels(wh, name, det, Path(tmp))
                gone = faceless(labels, FACE_GATE)
                for t in labels.tracks:
                    d, n = face_evidence(labels, t)
                    shares.append(d / n)
                    mark = f"SKIPPED ({gone[t.track_id]})" if t.track_id in gone else "kept"
                    print(f"  {det:5} {name:24} track {t.track_id}: detected {d:3}/{n:3} = {d / n:4.0%}  "
                          f"face {t.face_size_median:4.0f}px  {mark}")
                skipped += len(gone)
                gated, _ = gate_tracks(labels, FACE_GATE)
                for fam in GATED:  # selection with and without the gate on the same tracks
                    a, b = fam.select(labels, fam.params), fam.select(gated, fam.params)
                    if (a.selected, a.target_track_ids) != (b.selected, b.target_track_ids):
                        changed[fam.abbrev] += 1
            print(f"  {det}: {len(shares)} tracks, lowest detected share {min(shares):.0%}, "
                  f"skipped {skipped} (every face of these clips is visible: a skip here is a wrong one); "
                  f"gated families whose verdict changes: {dict(changed) or 'none'}")


def recheck_warehouse(path: Path) -> None:
    """Stored questions against today's gates, per task: (questions, face-gate rejects, form rejects)."""
    wh = Warehouse(path)
    tally: dict[str, Counter] = {}
    labels_of: dict[str, ClipLabels] = {}
    for q in wh.rows(QUESTIONS):
        if not q.get("options"):
            continue
        t = tally.setdefault(q["abbrev"], Counter())
        t["questions"] += 1
        fam = TASK_BY_ABBREV[q["abbrev"]]
        if fam.face_gate is not None:
            vid = q["video_id"]
            if vid not in labels_of:
                labels_of[vid] = ClipLabels(clip=load_clip(wh, vid), rows={"human_tracks": wh.rows(
                    HUMAN_TRACKS, video_id=vid)}, tracks=load_tracks(wh, vid))
            gone = faceless(labels_of[vid], fam.face_gate)
            marked = {int(k) for k in ((q.get("marking") or {}).get("numbers") or {})}
            if gone.keys() & (set(q["target_track_ids"] or []) | marked):
                t["face_gate"] += 1
        texts = [o["text"] for o in q["options"]]
        truth = q["answer_text"]
        others = [x for x in texts if x != truth]
        numbers = tuple(sorted(int(n) for n in ((q.get("marking") or {}).get("numbers") or {}).values()))
        bad = fam.option_problems(truth, others, numbers)
        if bad:
            t["forms"] += 1
            print(f"  {q['abbrev']} {q['question_id']}: {bad[0]}")
    print(f"stored questions of {path} re-checked:")
    for abbrev, t in sorted(tally.items()):
        print(f"  {abbrev:4} questions {t['questions']:4}  face gate rejects {t['face_gate']:4}  "
              f"form rejects {t['forms']:4}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--detectors", default="yunet,hog")
    ap.add_argument("--warehouse", type=Path)
    args = ap.parse_args()
    face_gate_on_shared_clips([d for d in args.detectors.split(",") if d])
    if args.warehouse:
        recheck_warehouse(args.warehouse)


if __name__ == "__main__":
    main()
