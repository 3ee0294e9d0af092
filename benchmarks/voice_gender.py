"""L10 voice class: the pitch rule alone (voice.PitchDemographer) against the gender MLP with the pitch
child rule (voice.MlpGenderDemographer) and the blend of both (adult split = mean of the MLP's and the
pitch rule's male probability), on the same labelled speech.

Run: PYTHONPATH=. .venv/bin/python benchmarks/voice_gender.py   (needs espeak-ng)

Items and their truth:
- the shared clips (../shared/videos): man_talking_head and five_people_grid a man, two_people_talking
  women, two_children children;
- espeak-ng voices of known gender: the en variants m1-m7 and f1-f5 and male / female variants of
  de, es, fr, it, cmn, two sentences each (synthetic voices: their gender is the variant's);
- the repository's test-samples (LibriSpeech, 16 kHz), read from its snapshot when present
  (--samples GIT_DIR), with the readers' sex from LibriSpeech's SPEAKERS.TXT (reader 22 is left out:
  its sex could not be looked up).
Printed: per item both classes, then accuracy per source and overall, adult-gender accuracy, child
recall, and the time per audio second of each."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.audio.voice import MlpGenderDemographer, PitchDemographer  # noqa: E402
from hvbench_assets.core.media import SAMPLE_RATE, load_audio  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
SHARED_TRUTH = {"man_talking_head": "male", "five_people_grid": "male", "two_people_talking": "female",
                "two_children": "child"}
SAMPLES_GIT = Path("/work/.mirror/x4nth055+gender-recognition-by-voice/repo")
LIBRISPEECH_SEX = {"16": "female", "17": "male", "19": "female", "26": "male", "27": "male"}
SENTENCES = {
    "en": ("The weather is lovely today and we will walk to the park after lunch with our friends.",
           "Please remember to bring your notebook and two pencils to the meeting tomorrow morning."),
    "de": ("Morgen fahren wir mit dem Zug nach Berlin und besuchen unsere Großeltern.",
           "Das Essen im kleinen Restaurant an der Ecke war gestern besonders gut."),
    "es": ("El tiempo es muy agradable hoy y vamos a caminar al parque después del almuerzo.",
           "Mi hermana trabaja en un hospital y vuelve a casa muy tarde."),
    "fr": ("Nous avons visité le musée hier et nous avons beaucoup aimé les peintures anciennes.",
           "Le train pour Lyon part à huit heures et demie du matin."),
    "it": ("Domani andiamo al mare con tutta la famiglia se il tempo è bello.",
           "Il libro che mi hai prestato è davvero interessante."),
    "cmn": ("今天天气很好，我们下午一起去公园散步，然后去吃晚饭。", "我的朋友明天要去北京工作，他很高兴。"),
}
VARIANTS = {"en": [f"m{i}" for i in range(1, 8)] + [f"f{i}" for i in range(1, 6)],
            **{lang: ["m1", "m3", "f2", "f4"] for lang in ("de", "es", "fr", "it", "cmn")}}


def espeak_items(folder: Path) -> list[tuple[str, str, str, np.ndarray]]:
    out = []
    for lang, variants in VARIANTS.items():
        for variant in variants:
            for k, text in enumerate(SENTENCES[lang]):
                wav = folder / f"{lang}_{variant}_{k}.wav"
                subprocess.run(["espeak-ng", "-v", f"{lang}+{variant}", "-w", str(wav), text], check=True,
                               capture_output=True)
                truth = "male" if variant.startswith("m") else "female"
                out.append(("espeak", f"{lang}+{variant} #{k}", truth, load_audio(wav)))
    return out


def sample_items(git_dir: Path, folder: Path) -> list[tuple[str, str, str, np.ndarray]]:
    if not (git_dir / "HEAD").exists():
        return []
    names = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "--name-only", "HEAD", "test-samples/"],
                           capture_output=True, text=True, check=True).stdout.split()
    out = []
    for name in names:
        reader = Path(name).name.split("-")[0]
        if reader not in LIBRISPEECH_SEX:
            continue
        wav = folder / Path(name).name
        wav.write_bytes(subprocess.run(["git", "-C", str(git_dir), "show", f"HEAD:{name}"], capture_output=True,
                                       check=True).stdout)
        out.append(("librispeech", Path(name).stem, LIBRISPEECH_SEX[reader], load_audio(wav)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES_GIT, help="git dir of gender-recognition-by-voice")
    args = parser.parse_args()
    methods = {"pitch": PitchDemographer(), "mlp": MlpGenderDemographer(), "blend": MlpGenderDemographer(blend=True)}
    with tempfile.TemporaryDirectory() as tmp:
        items = [("shared clip", c.stem, SHARED_TRUTH[c.stem], load_audio(c))
                 for c in sorted(SHARED.glob("*.mp4")) if c.stem in SHARED_TRUTH]
        items += espeak_items(Path(tmp)) + sample_items(args.samples, Path(tmp))
    spent = dict.fromkeys(methods, 0.0)
    found: dict[str, list] = {m: [] for m in methods}
    print("| source | item | truth | pitch (Hz) | " + " | ".join(methods) + " |")
    print("|---|---|---|---|" + "---|" * len(methods))
    for source, name, truth, audio in items:
        cells, pitch = [], None
        for m, est in methods.items():
            t0 = time.perf_counter()
            row = est.estimate(audio)
            spent[m] += time.perf_counter() - t0
            found[m].append(row.voice_class)
            pitch = pitch or row.pitch_hz
            cells.append(f"{row.voice_class} {row.confidence:.2f}" if row.status == "ok" else row.status)
        print(f"| {source} | {name} | {truth} | {pitch} | " + " | ".join(cells) + " |")
    audio_s = sum(len(a) for *_, a in items) / SAMPLE_RATE
    truths = [t for _, _, t, _ in items]
    sources = [s for s, *_ in items]
    print("\n| method | " + " | ".join(f"{s} ({sources.count(s)})" for s in dict.fromkeys(sources)) +
          f" | all ({len(items)}) | adult gender ({sum(t != 'child' for t in truths)}) | child recall | ms per audio s |")
    print("|---|" + "---|" * (len(set(sources)) + 4))
    for m in methods:
        hits = [f == t for f, t in zip(found[m], truths)]
        per = [np.mean([h for h, s in zip(hits, sources) if s == src]) for src in dict.fromkeys(sources)]
        adult = np.mean([h for h, t in zip(hits, truths) if t != "child"])
        child = [h for h, t in zip(hits, truths) if t == "child"]
        print(f"| {m} | " + " | ".join(f"{p:.2f}" for p in per) + f" | {np.mean(hits):.2f} | {adult:.2f} | "
              f"{sum(child)}/{len(child)} | {spent[m] / audio_s * 1000:.1f} |")


if __name__ == "__main__":
    main()
