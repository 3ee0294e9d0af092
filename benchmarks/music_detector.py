"""Scores of the offline music / singing detector (core.audio.music) and of the speech gate for the
tasks on generated and real inputs, plus its cost per audio second as a ratio to plain decoding.

Run: .venv/bin/python benchmarks/music_detector.py   (needs espeak-ng; real clips from ../shared/videos)
Columns: music_s / duration, music tag score (time share), share of audible frames with sustained tonal
peaks, best 4 s window beat strength, VAD speech seconds, seconds of speech with music under it, and
speech_for_tasks (the predicate the tasks that need speech call)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.audio import labels  # noqa: E402
from hvbench_assets.core.audio.tags import VadEnergyTagger  # noqa: E402
from hvbench_assets.core.audio.task_predicates import speech_for_tasks  # noqa: E402
from hvbench_assets.core.media import SAMPLE_RATE, load_audio  # noqa: E402
from hvbench_assets_tests.core.audio import sounds  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
SENTENCES = {"en-us": "The weather is lovely today and we will walk to the park after lunch with our friends.",
             "cmn": "今天天气很好，我们下午一起去公园散步，然后去吃晚饭。",
             "es": "El tiempo es muy agradable hoy y vamos a caminar al parque después del almuerzo."}


def espeak(voice: str, text: str, folder: Path):
    wav = folder / f"{voice}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(wav), text], check=True, capture_output=True)
    return load_audio(wav)


def inputs(folder: Path) -> dict:
    speech = {v: espeak(v, t, folder) for v, t in SENTENCES.items()}
    cases = {
        "steady tone 440 Hz": sounds.tone(), "white noise": sounds.white_noise(),
        "held chords": sounds.chords(), "piano-like notes + beat": sounds.piano_with_beat(),
        "drum beat only": sounds.beat(8.0), "sung-vowel melody": sounds.sung_vowels(),
        "sung vowels over piano": sounds.mix(sounds.sung_vowels(), sounds.piano_with_beat()),
        **{f"espeak speech {v}": a for v, a in speech.items()},
        "speech over chords (-6 dB)": sounds.mix(speech["en-us"], sounds.chords()),
        "speech over piano+beat (-6 dB)": sounds.mix(speech["en-us"], sounds.piano_with_beat()),
        "speech over piano+beat (-12 dB)": sounds.mix(speech["en-us"], sounds.piano_with_beat(), -12),
        "es speech over piano+beat (-6 dB)": sounds.mix(speech["es"], sounds.piano_with_beat()),
    }
    for clip in sorted(SHARED.glob("*.mp4")):
        cases[f"real: {clip.stem}"] = load_audio(clip)
    return cases


def main() -> None:
    tagger = VadEnergyTagger()
    with tempfile.TemporaryDirectory() as tmp:
        cases = inputs(Path(tmp))
    print("| input | music_s / dur | music score | tonal | beat | speech_s | speech under music | speech_for_tasks |")
    print("|---|---|---|---|---|---|---|---|")
    spent = audio_s = 0.0
    for name, audio in cases.items():
        t0 = time.perf_counter()
        row = labels.tags_row(tagger, audio)
        spent += time.perf_counter() - t0
        audio_s += len(audio) / SAMPLE_RATE
        ok, why = speech_for_tasks(row)
        ev = row["music_evidence"]
        print(f"| {name} | {row['music_s']:.1f} / {row['duration_s']:.1f} | {row['music_score']:.2f} | "
              f"{ev['tonal_share']:.2f} | {ev['beat_strength']:.2f} | {row['speech_s']:.1f} | {row['speech_music_s']:.1f} | "
              f"{'yes' if ok else 'no'}: {why} |")
    clip = next(iter(sorted(SHARED.glob("*.mp4"))), None)
    if clip is not None:  # cost of the music detector alone against a plain decode of the same clip
        from hvbench_assets.core.audio.music import MusicDetector

        t0 = time.perf_counter()
        audio = load_audio(clip)
        decode = time.perf_counter() - t0
        t0 = time.perf_counter()
        MusicDetector().detect(audio)
        detect = time.perf_counter() - t0
        print(f"\nmusic detector on {clip.name}: {detect / decode:.2f}x the decode time "
              f"({detect / (len(audio) / SAMPLE_RATE) * 1000:.1f} ms per audio second); whole L6 row: "
              f"{spent / audio_s * 1000:.1f} ms per audio second over all inputs")


if __name__ == "__main__":
    main()
