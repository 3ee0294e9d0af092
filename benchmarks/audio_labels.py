"""Time per audio second of each audio label's offline backend, as a ratio to plain audio decoding.

Run: .venv/bin/python benchmarks/audio_labels.py [clip ...]   (default: the shared test clips)
The baseline is `load_audio` (decode + resample to 16 kHz mono) of the same clip in this process;
a ratio of 3 means the label costs three decodes. L7 is timed per track-second on a face crop."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hvbench_assets.core.audio.asr import PocketsphinxTranscriber  # noqa: E402
from hvbench_assets.core.audio.tags import VadEnergyTagger  # noqa: E402
from hvbench_assets.core.audio.vad import speech_probabilities  # noqa: E402
from hvbench_assets.core.audio.voice import PitchDemographer  # noqa: E402
from hvbench_assets.core.media import iter_frames, load_audio, probe_video  # noqa: E402
from hvbench_assets.core.speakers.asd_runtime import OnnxLightAsdScorer  # noqa: E402
from hvbench_assets.core.speakers.light_asd import prepare_faces  # noqa: E402
from hvbench_assets.core.speakers.lipsync import LipSyncScorer  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"


def best_of(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def face_crop(path: Path, size=160) -> list[np.ndarray]:
    """A fixed central square of every frame: stands in for an L1 face crop (same pixel work)."""
    import cv2

    out = []
    for f in iter_frames(path):
        h, w = f.image.shape[:2]
        s = min(h, w) // 2
        out.append(cv2.resize(f.image[h // 2 - s // 2 : h // 2 + s // 2, w // 2 - s // 2 : w // 2 + s // 2], (size, size)))
    return out


def main(paths: list[Path]) -> None:
    tagger, asr, voice, lips = VadEnergyTagger(), PocketsphinxTranscriber(), PitchDemographer(), LipSyncScorer()
    asd = OnnxLightAsdScorer()  # shipped weights, default windows, batched (core/speakers/asd_batch.py)
    print(f"{'clip':24} {'audio s':>7} {'decode ms/s':>11} | ratios to decode (time per audio second)")
    for path in paths:
        audio = load_audio(path)
        seconds = len(audio) / 16000
        fps = probe_video(path, count_frames=False).fps
        base = best_of(lambda: load_audio(path)) / seconds
        segs = tagger.tag(audio).speech_segments
        crop = face_crop(path)
        crop_s = len(crop) / fps
        timings = {
            "vad": best_of(lambda: speech_probabilities(audio)) / seconds,
            "L6 tags": best_of(lambda: tagger.tag(audio)) / seconds,
            "L8 pocketsphinx": best_of(lambda: asr.transcribe(audio, segs), 1) / seconds,
            "L10 pitch": best_of(lambda: voice.estimate(audio)) / seconds,
            "L7 lipsync/track": best_of(lambda: lips.score(crop, audio[: int(crop_s * 16000)], fps), 1) / crop_s,
            "L7 light-asd onnx/track": best_of(
                lambda: asd.score_prepared([(prepare_faces(crop), audio[: int(crop_s * 16000)])], fps), 1) / crop_s,
        }
        print(f"{path.name:24} {seconds:7.1f} {base * 1000:11.1f} | "
              + "  ".join(f"{k} {v / base:.1f}x ({v * 1000:.0f} ms/s)" for k, v in timings.items()))


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]] or sorted(SHARED.glob("*.mp4"))
    main(args)
