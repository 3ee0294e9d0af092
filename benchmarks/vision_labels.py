"""Cost of the L1-L3 vision labels on the shared clips, against a plain PyAV decode of the same clip.

For each clip and label: wall seconds per second of video, the ratio to decoding every frame of the clip
with PyAV (to BGR arrays, nothing else), and how often the source clip was opened for video / audio
decoding (counted by wrapping `av.open`). L1 also runs once without the rescue passes (rotated / enlarged
HOG second look) to show what they cost and which detections they add. Run: .venv/bin/python benchmarks/vision_labels.py [clips...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baselines import plain_decode  # noqa: E402
from hvbench_assets.core.media import probe_video  # noqa: E402
from hvbench_assets.core.vision import HUMAN_TRACK_BOXES, HUMAN_TRACKS, load_tracks  # noqa: E402
from hvbench_assets.core.vision.backends import build_backend  # noqa: E402
from hvbench_assets.core.vision.count import TrackSpan, count_people  # noqa: E402
from hvbench_assets.core.vision.demographics import FaceAttributes, demographics_rows  # noqa: E402
from hvbench_assets.core.warehouse import Warehouse  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
DECODES: Counter = Counter()  # (path, "video" | "audio") -> containers that decoded that kind
_real_open = av.open


class _CountingContainer:
    """Delegates to a PyAV container and records which kinds of stream it decodes."""

    def __init__(self, container, path: str):
        self._c, self._path, self._seen = container, path, set()

    def __getattr__(self, name):
        return getattr(self._c, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._c.close()

    def decode(self, *streams, **kw):
        kinds = {getattr(s, "type", None) for s in streams} | {k for k in kw if k in ("video", "audio")}
        for kind in kinds - self._seen - {None}:
            DECODES[(self._path, kind)] += 1
            self._seen.add(kind)
        return self._c.decode(*streams, **kw)


def _counting_open(file, *args, **kwargs):
    container = _real_open(file, *args, **kwargs)
    mode = kwargs.get("mode", args[0] if args else "r")
    return _CountingContainer(container, str(file)) if mode == "r" else container


class _CropReader:
    """Reads every sampled crop like the full L3 backend would (no attribute model here): measures the
    crop-clip decoding that L3 adds, without inventing any label."""

    model = "crop-reader"

    method = "crop-reader"
    measured_accuracy = measured_age_accuracy = None

    def analyze(self, faces):
        return [FaceAttributes(0.0, "-", "-") for _ in faces]


def measure(path: Path, backend, work: Path, plain_backend=None) -> list[tuple[str, float, int, int]]:
    from hvbench_assets.core.vision.pipeline import track_video

    wh = Warehouse(work / "wh.duckdb")
    vid = path.stem
    out = []

    def run(label, fn):
        DECODES.clear()
        t = time.perf_counter()
        value = fn()
        dt = time.perf_counter() - t
        out.append((label, dt, DECODES[(str(path), "video")], DECODES[(str(path), "audio")]))
        return value

    if plain_backend is not None:  # the same tracker without the rescue passes, for their cost and yield
        plain = run("L1 human_tracks (first pass only)", lambda: track_video(path, work / f"{vid}_plain", plain_backend))
        out[-1] = (*out[-1], _summary(plain))
    res = run("L1 human_tracks", lambda: track_video(path, work / vid, backend))
    out[-1] = (*out[-1], _summary(res))
    wh.replace(HUMAN_TRACKS, {"video_id": vid}, res.tracks)
    wh.replace(HUMAN_TRACK_BOXES, {"video_id": vid}, res.boxes)
    people = run("L2 person_count", lambda: count_people(
        [TrackSpan(t["track_id"], t["first_frame"], t["last_frame"], t["face_embedding"]) for t in res.tracks]))
    run("L3 demographics (offline: unavailable)", lambda: demographics_rows(load_tracks(wh, vid), None))
    run("L3 crop sampling (full path, 8/track)", lambda: demographics_rows(load_tracks(wh, vid), _CropReader()))
    return out, res, people.count


def _summary(res) -> str:
    """Tracks as [first-last frame, detections (rescued)] and the clip's face presence."""
    spans = " ".join(f"[{t['first_frame']}-{t['last_frame']} {t['n_detections']}({t.get('n_rescued', 0)})]" for t in res.tracks)
    return f"tracks={len(res.tracks)} presence={res.face_presence:.3f} {spans}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clips", nargs="*", type=Path, help="video files (default: ../shared/videos/*.mp4)")
    args = ap.parse_args()
    clips = args.clips or sorted(SHARED.glob("*.mp4"))
    if not clips:
        sys.exit(f"no clips given and none in {SHARED}")
    backend = build_backend("offline")
    plain_backend = build_backend("offline", rescue=False) if backend.rescue is not None else None
    av.open = _counting_open
    print(f"backend: {backend.model}")
    print(f"{'clip':24} {'label':40} {'s/video-s':>9} {'x decode':>9} {'video dec':>9} {'audio dec':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in clips:
            info = probe_video(path)
            base = plain_decode(path, repeat=2, open_fn=_real_open)
            print(f"{path.stem:24} {'plain PyAV decode (baseline)':40} {base / info.duration_s:9.3f} {1.0:9.2f} {1:9d} {0:9d}")
            rows, res, people = measure(path, backend, Path(tmp), plain_backend)
            for label, dt, vdec, adec, *summary in rows:
                print(f"{'':24} {label:40} {dt / info.duration_s:9.3f} {dt / base:9.2f} {vdec:9d} {adec:9d}"
                      + (f"  {summary[0]}" if summary else ""))
            stages = ", ".join(f"{k} {v:.2f}s" for k, v in res.timings.items())
            print(f"{'':24} L1 tracks={len(res.tracks)} L2 people={people} face_presence={res.face_presence:.2f} "
                  f"({info.duration_s:.1f}s, {info.frame_count} frames; {stages})")


if __name__ == "__main__":
    main()
