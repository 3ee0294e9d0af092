"""L7's `verified` scores with and without the work that cannot change them (combined.VerifiedScorer.score_placed).

L1 runs once on each clip where L6 hears speech (L7 scores no other; the offline backend, the job's tracking
parameters, no body clips); then, interleaved over `--repeat` rounds in this process, every clip's tracks are scored
by `clip_scores` two ways:
- before: every track's mouth landmarks read while its crops stream, Light-ASD on every track, and the scores taken
  from `parts` (`combine_verified`), as L7 did up to 2baac27;
- after: the production path (Light-ASD only where a voice is heard, the landmarks only of faces that meet where
  `beaten` decides a score).
It prints the CPU seconds of each, their ratio, how many tracks needed Light-ASD and the landmarks, and whether every
row is the same (it must be). dlib's models are loaded before timing (a process whose clips need no landmarks skips
that load too: about 1.4 CPU-s).

Clips: the 8 short clips of short_clip_backfill.py (default), `--shared` adds the shared clips and the speakers set
(../shared/videos, ../shared/videos/speakers), where faces meet under a voice.

Run: PYTHONPATH=. .venv/bin/python benchmarks/verified_skips.py [--shared] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clip_job import SHARED  # noqa: E402
from short_clip_backfill import LENGTHS, make_clips  # noqa: E402

from hvbench_assets.core.media import iter_frames, load_audio  # noqa: E402
from hvbench_assets.core.speakers.asd_runtime import OnnxLightAsdScorer  # noqa: E402
from hvbench_assets.core.speakers.combined import VerifiedScorer, combine_verified  # noqa: E402
from hvbench_assets.core.speakers.lips import _models  # noqa: E402
from hvbench_assets.core.speakers.scoring import TrackFrames, clip_scores, too_small  # noqa: E402


class Before(VerifiedScorer):
    """The path up to 2baac27: landmarks of every face while its crops stream, the scores from `parts`."""

    def score_placed(self, tracks, fps):
        return [combine_verified(p) for p in self.parts(tracks, fps)]


class Counting(VerifiedScorer):
    """The production path, counting the tracks given to Light-ASD and those whose landmarks were read."""

    asd_tracks = lips_tracks = 0

    def score_placed(self, tracks, fps):
        out = super().score_placed(tracks, fps)
        Counting.lips_tracks += sum("lips" in vars(t.signals) for t in tracks)
        Counting.asd_tracks += sum(self.lips.voice_gate(t.signals.voice_prob, fps).any() for t in tracks)
        return out


def tracked(clips: list[Path], work: Path) -> list[tuple[Path, list, float]]:
    """L1's tracks of each clip that L7 scores: L6 hears speech in it (speech_gate), its face is not too small."""
    from hvbench_assets.core.audio.backends import AudioBackendConfig, build
    from hvbench_assets.core.audio.labels import speech_gate, tags_row
    from hvbench_assets.core.vision.backends import build_backend
    from hvbench_assets.core.vision.pipeline import track_video
    from hvbench_assets.defs.resources import VisionResource

    backend, params = build_backend("offline"), replace(VisionResource().tracking_params(), body_clips=False)
    tagger = build("tagger", AudioBackendConfig())
    out = []
    for c in clips:
        if speech_gate(tags_row(tagger, load_audio(c))) is not None:
            continue
        res = track_video(c, work / c.stem, backend, params)
        out.append((c, [t for t in res.tracks if not too_small(t["face_size_median"])], res.fps))
    return out


def score(scorer, clips) -> tuple[float, list]:
    t0, rows = time.process_time(), []
    for clip, tracks, fps in clips:
        frames = [TrackFrames(t["track_id"], t["first_frame"], t["n_frames"],
                              lambda p=t["face_clip_path"]: (f.image for f in iter_frames(p))) for t in tracks]
        rows.append(clip_scores(scorer, frames, load_audio(clip), fps) if frames else [])
    return time.process_time() - t0, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", action="store_true", help="also the shared clips and the speakers set")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hvbench_verified_") as tmp:
        clips = make_clips(list(LENGTHS), Path(tmp) / "clips")
        if args.shared:
            clips += sorted(SHARED.glob("*.mp4")) + sorted((SHARED / "speakers").glob("*.mp4"))
        print(f"{len(clips)} clips, load average {os.getloadavg()[0]:.1f}")
        done = tracked(clips, Path(tmp) / "l1")
        print(f"{len(done)} clips with speech, {sum(len(t) for _, t, _ in done)} tracks, {sum(x['n_frames'] for _, t, _ in done for x in t)} frames")
        asd = OnnxLightAsdScorer()
        before, after = Before(asd, defer_lips=False), Counting(asd)
        asd.load(), _models()
        score(after, done[:1])  # warm-up: the sessions' first runs
        cpu = {"before": [], "after": []}
        same = True
        for r in range(args.repeat):
            order = [("before", before), ("after", after)][:: -1 if r % 2 else 1]
            rows = {}
            for name, scorer in order:
                if name == "after":
                    Counting.asd_tracks = Counting.lips_tracks = 0
                c, rows[name] = score(scorer, done)
                cpu[name].append(c)
            same &= rows["before"] == rows["after"]
            print(f"round {r + 1}: before {cpu['before'][-1]:.2f} CPU-s, after {cpu['after'][-1]:.2f} "
                  f"({cpu['after'][-1] / cpu['before'][-1]:.2f}x); after: Light-ASD on {Counting.asd_tracks} tracks, "
                  f"landmarks of {Counting.lips_tracks}; rows the same: {rows['before'] == rows['after']}; load "
                  f"average {os.getloadavg()[0]:.1f}")
        print(f"after / before: {sum(cpu['after']) / sum(cpu['before']):.2f}x the CPU; every row the same: {same}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
