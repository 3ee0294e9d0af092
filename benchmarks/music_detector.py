"""L6 music / singing: YAMNet (core.audio.yamnet) against the signal-processing detector
(core.audio.music) on the same labelled items, and the speech gate of the tasks (speech_for_tasks)
on the rows each produces. Both run inside the same offline tagger (silero-vad speech, loudness).

Run: PYTHONPATH=. .venv/bin/python benchmarks/music_detector.py   (needs espeak-ng; real clips from
../shared/videos, taken as speech without music)

Items: generated music (held chords, piano-like notes over a beat, a drum beat, a sung-vowel melody),
sounds that are not music (a steady tone, noise, beeps, a ticking clock, a siren, mains hum), espeak-ng
speech in several voices and languages, speech over music, over noise and hum, music followed by speech,
and the shared clips. Truth per item: music seconds (whole item, none, or the music part) and whether
the speech gate should pass (None where the item has no speech to judge).
Printed: per item music seconds, is_music and the gate for both; then precision / recall of is_music
per item and of music seconds, gate accuracy, and cost per audio second."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.audio import labels  # noqa: E402
from hvbench_assets.core.audio.music import MusicDetector  # noqa: E402
from hvbench_assets.core.audio.tags import VadEnergyTagger  # noqa: E402
from hvbench_assets.core.audio.task_predicates import speech_for_tasks  # noqa: E402
from hvbench_assets.core.audio.yamnet import YamnetMusicDetector  # noqa: E402
from hvbench_assets.core.media import SAMPLE_RATE, load_audio  # noqa: E402
from hvbench_assets.testkit import sounds  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
SENTENCES = {"en-us": "The weather is lovely today and we will walk to the park after lunch with our friends.",
             "cmn": "今天天气很好，我们下午一起去公园散步，然后去吃晚饭。",
             "es": "El tiempo es muy agradable hoy y vamos a caminar al parque después del almuerzo.",
             "en+f3": "Please remember to bring your notebook and two pencils to the meeting tomorrow morning.",
             "de": "Morgen fahren wir mit dem Zug nach Berlin und besuchen unsere Großeltern.",
             "fr+m3": "Nous avons visité le musée hier et nous avons beaucoup aimé les peintures anciennes."}


@dataclass
class Item:
    audio: np.ndarray
    music: list[tuple[float, float]]  # true music stretches, seconds
    gate: bool | None  # should speech_for_tasks pass; None: nothing to judge (no speech)


def espeak(voice: str, text: str, folder: Path) -> np.ndarray:
    wav = folder / f"{voice.replace('+', '_')}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(wav), text], check=True, capture_output=True)
    return load_audio(wav)


def dur(audio: np.ndarray) -> float:
    return len(audio) / SAMPLE_RATE


def items(folder: Path) -> dict[str, Item]:
    speech = {v: espeak(v, t, folder) for v, t in SENTENCES.items()}
    whole = lambda a: [(0.0, dur(a))]  # noqa: E731
    music = {"held chords": sounds.chords(), "piano-like notes + beat": sounds.piano_with_beat(),
             "drum beat only": sounds.beat(8.0), "sung-vowel melody": sounds.sung_vowels(),
             "sung vowels over piano": sounds.mix(sounds.sung_vowels(), sounds.piano_with_beat())}
    out = {k: Item(a, whole(a), None) for k, a in music.items()}
    not_music = {"steady tone 440 Hz": sounds.tone(), "white noise": sounds.white_noise(), "beeps (alarm)": sounds.beeps(),
                 "ticking clock": sounds.ticking(), "siren": sounds.siren(), "mains hum": sounds.hum()}
    out |= {k: Item(a, [], None) for k, a in not_music.items()}
    out |= {f"espeak speech {v}": Item(a, [], True) for v, a in speech.items()}
    mixes = {"speech over chords (-6 dB)": ("en-us", sounds.chords(), -6),
             "speech over piano+beat (-6 dB)": ("en-us", sounds.piano_with_beat(), -6),
             "speech over piano+beat (-12 dB)": ("en-us", sounds.piano_with_beat(), -12),
             "es speech over piano+beat (-6 dB)": ("es", sounds.piano_with_beat(), -6),
             "de speech over a drum beat (-6 dB)": ("de", sounds.beat(8.0), -6),
             "f3 speech over sung vowels (-6 dB)": ("en+f3", sounds.sung_vowels(), -6)}
    for k, (v, m, db) in mixes.items():
        a = sounds.mix(speech[v], m, db)
        out[k] = Item(a, whole(a), False)
    for k, (v, m, db) in {"speech over noise (-10 dB)": ("en-us", sounds.babble_noise(), -10),
                          "speech over mains hum (-10 dB)": ("fr+m3", sounds.hum(), -10),
                          "speech with a ticking clock (-10 dB)": ("de", sounds.ticking(), -10)}.items():
        out[k] = Item(sounds.mix(speech[v], m, db), [], True)
    intro = sounds.piano_with_beat(4.0)
    a = np.concatenate([intro, speech["en-us"]])
    out["4 s piano intro, then speech"] = Item(a, [(0.0, 4.0)], True)  # the music is not under the speech
    for clip in sorted(SHARED.glob("*.mp4")):
        out[f"real: {clip.stem}"] = Item(load_audio(clip), [], True)
    return out


def overlap(a: list, b: list) -> float:
    return sum(max(0.0, min(y, d) - max(x, c)) for x, y in a for c, d in b)


def score(rows: dict, truth: dict[str, Item]) -> dict:
    tp = sum(rows[k]["is_music"] and bool(it.music) for k, it in truth.items())
    fp = sum(rows[k]["is_music"] and not it.music for k, it in truth.items())
    fn = sum(not rows[k]["is_music"] and bool(it.music) for k, it in truth.items())
    found = sum(sum(b - a for a, b in rows[k]["music_segments"]) for k in truth)
    true = sum(sum(b - a for a, b in it.music) for it in truth.values())
    hit = sum(overlap(rows[k]["music_segments"], it.music) for k, it in truth.items())
    gates = [(speech_for_tasks(rows[k])[0], it.gate) for k, it in truth.items() if it.gate is not None]
    return {"items": len(truth), "item_p": tp / max(1, tp + fp), "item_r": tp / max(1, tp + fn), "fp": fp, "fn": fn,
            "sec_p": hit / max(1e-9, found), "sec_r": hit / max(1e-9, true),
            "gate_acc": sum(g == t for g, t in gates) / max(1, len(gates)), "gates": len(gates),
            "gate_wrong": sum(g != t for g, t in gates)}


def main() -> None:
    taggers = {"signal": VadEnergyTagger(music_detector=MusicDetector()),
               "yamnet": VadEnergyTagger(music_detector=YamnetMusicDetector())}
    with tempfile.TemporaryDirectory() as tmp:
        truth = items(Path(tmp))
    rows: dict[str, dict] = {name: {} for name in taggers}
    spent = dict.fromkeys(taggers, 0.0)
    audio_s = sum(dur(it.audio) for it in truth.values())
    for name, tagger in taggers.items():
        tagger.tag(truth["held chords"].audio[:SAMPLE_RATE])  # load models outside the timing
        for k, it in truth.items():
            t0 = time.perf_counter()
            rows[name][k] = labels.tags_row(tagger, it.audio)
            spent[name] += time.perf_counter() - t0
    print("| item | true music s | signal: music s / is_music / gate | yamnet: music s / is_music / gate | gate truth |")
    print("|---|---|---|---|---|")
    for k, it in truth.items():
        cells = []
        for name in taggers:
            r = rows[name][k]
            ok, _ = speech_for_tasks(r)
            cells.append(f"{r['music_s']:.1f} / {'yes' if r['is_music'] else 'no'} / {'pass' if ok else 'reject'}")
        gate = "-" if it.gate is None else "pass" if it.gate else "reject"
        print(f"| {k} | {sum(b - a for a, b in it.music):.1f} of {dur(it.audio):.1f} | {cells[0]} | {cells[1]} | {gate} |")
    print("\n| detector | items | is_music precision | recall | false pos / neg | music-seconds precision | recall | "
          "speech gate accuracy (wrong of n) | ms per audio s (whole L6 row) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in taggers:
        s = score(rows[name], truth)
        print(f"| {name} | {s['items']} | {s['item_p']:.2f} | {s['item_r']:.2f} | {s['fp']} / {s['fn']} | {s['sec_p']:.2f} | "
              f"{s['sec_r']:.2f} | {s['gate_acc']:.2f} ({s['gate_wrong']} of {s['gates']}) | "
              f"{spent[name] / audio_s * 1000:.1f} |")
    print(f"\nyamnet / signal time ratio: {spent['yamnet'] / spent['signal']:.2f}")


if __name__ == "__main__":
    main()
