"""How many voices are heard at once (core/audio/overlap.py) on labelled audio: the share of voiced time
where two voices are heard, the verdict, and precision / recall of "several" per source.

Run: PYTHONPATH=. .venv/bin/python benchmarks/voice_overlap.py [--sweep]   (needs espeak-ng)

Sources and truth (several = two voices at once somewhere in the item):
- tune (thresholds chosen here): `synthetic` espeak-ng English, 8 voices x 2 sentences alone (one) and
  8 pairs (4 same-gender, 4 cross-gender) mixed at 0 and +-6 dB (several); `composites` from
  hvbench_assets/testkit/speaker_composites.py: man_voice, woman_voice (one), two_voices (several).
- confirm (never tuned on): `speakers` (../shared/videos/speakers, truth.json: dev_duo_both_speak
  several, the other speech clips one, music / silence none); `shared` (man_talking_head,
  two_people_talking, five_people_grid: one; two_children is printed but unlabelled: several children
  and an adult, overlap unknown); `librispeech` (the LibriSpeech test-samples of
  x4nth055/gender-recognition-by-voice when its snapshot is present: 12 readings alone, 6 pairs of
  readers mixed at 0 / +-6 dB).
Mixes print the true share too: frames voiced in both sources over frames voiced in either.
Every item passes silero-vad's speech probabilities, as L6 has them. --sweep prints precision / recall of
the tune sources for clip thresholds 0.04-0.30."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.audio import overlap  # noqa: E402
from hvbench_assets.core.audio.vad import speech_probabilities  # noqa: E402
from hvbench_assets.core.media import SAMPLE_RATE, load_audio  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
SAMPLES_GIT = Path("/work/.mirror/x4nth055+gender-recognition-by-voice/repo")
SENTENCES = ("The weather is lovely today and we will walk to the park after lunch with our friends.",
             "Please remember to bring your notebook and two pencils to the meeting tomorrow morning.",
             "My sister works at the hospital and comes home very late every evening this week.",
             "The old train station was painted blue and green before the summer festival began.")
VOICES = {"m1": ("en+m1", 50), "m3": ("en+m3", 35), "m7": ("en+m7", 45), "m2": ("en+m2", 60),
          "f2": ("en+f2", 50), "f4": ("en+f4", 65), "f1": ("en+f1", 40), "f5": ("en+f5", 55)}
PAIRS = (("m1", "m3"), ("m2", "m7"), ("f2", "f4"), ("f1", "f5"), ("m1", "f2"), ("m3", "f4"), ("m7", "f1"), ("m2", "f5"))
LIBRI_PAIRS = (("16-122828-0007", "17-363-0002"), ("19-227-0005", "26-496-0004"), ("17-363-0003", "26-496-0005"),
               ("16-122828-0007", "19-227-0031"), ("27-124992-0002", "19-227-0005"), ("26-496-0004", "17-363-0002"))
TUNE = ("synthetic", "composites")


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.asarray(x, np.float64) ** 2)) + 1e-9)


def mix(a: np.ndarray, b: np.ndarray, db: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """b set `db` above a (RMS over the shorter length); returns the mix and both scaled sources."""
    n = min(len(a), len(b))
    a, b = a[:n], b[:n] * rms(a[:n]) / rms(b[:n]) * 10 ** (db / 20)
    peak = max(1.0, float(np.abs(a + b).max()) / 0.9)
    return ((a + b) / peak).astype(np.float32), a / peak, b / peak


def true_share(a: np.ndarray, b: np.ndarray) -> float:
    va, vb = overlap.frame_analysis(a)["voiced"], overlap.frame_analysis(b)["voiced"]
    return float((va & vb).sum() / max(1, (va | vb).sum()))


def espeak(folder: Path, key: str, k: int) -> np.ndarray:
    voice, pitch = VOICES[key]
    wav = folder / f"{key}_{k}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", "160", "-w", str(wav), SENTENCES[k % 4]],
                   check=True, capture_output=True)
    return load_audio(wav)


def items(folder: Path):
    """(source, name, truth, audio, true overlap share or None)"""
    singles = {}
    for i, key in enumerate(VOICES):
        for j in range(2):
            singles[key, j] = espeak(folder, key, i + j)
            yield "synthetic", f"{key} #{j}", "one", singles[key, j], None
    for a, b in PAIRS:
        for db in (0, 6, -6):
            m, sa, sb = mix(singles[a, 0], singles[b, 1], db)
            yield "synthetic", f"{a}+{b} {db:+d} dB", "several", m, true_share(sa, sb)
    from hvbench_assets.testkit.speaker_composites import SCENES, scene_audio

    scenes = {s.name: s for s in SCENES}
    man, woman = (scene_audio(scenes[n], SHARED, 4.0) for n in ("man_voice", "woman_voice"))
    yield "composites", "man_voice", "one", man, None
    yield "composites", "woman_voice", "one", woman, None
    yield "composites", "two_voices", "several", scene_audio(scenes["two_voices"], SHARED, 4.0), true_share(man, woman)
    import json

    truth = json.loads((SHARED / "speakers" / "truth.json").read_text())
    for name, t in sorted(truth.items()):
        label = "none" if "speech" not in t["sound"] else "several" if len(t["sound"]) > 1 else "one"
        yield "speakers", name, label, load_audio(SHARED / "speakers" / f"{name}.mp4"), None
    for name, label in (("man_talking_head", "one"), ("two_people_talking", "one"), ("five_people_grid", "one"),
                        ("two_children", "?")):
        yield "shared", name, label, load_audio(SHARED / f"{name}.mp4"), None
    if (SAMPLES_GIT / "HEAD").exists():
        libri = {}
        names = subprocess.run(["git", "-C", str(SAMPLES_GIT), "ls-tree", "--name-only", "HEAD", "test-samples/"],
                               capture_output=True, text=True, check=True).stdout.split()
        for name in names:
            wav = folder / Path(name).name
            wav.write_bytes(subprocess.run(["git", "-C", str(SAMPLES_GIT), "show", f"HEAD:{name}"],
                                           capture_output=True, check=True).stdout)
            libri[wav.stem] = load_audio(wav)
            yield "librispeech", wav.stem, "one", libri[wav.stem], None
        for a, b in LIBRI_PAIRS:
            for db in (0, 6, -6):
                m, sa, sb = mix(libri[a], libri[b], db)
                yield "librispeech", f"{a[:2]}+{b[:2]} {db:+d} dB", "several", m, true_share(sa, sb)


def precision_recall(rows, threshold: float | None = None) -> tuple[float, float, int, int]:
    tp = fp = fn = 0
    for r in rows:
        if r["truth"] == "?":
            continue
        said = r["verdict"] if threshold is None else (
            "none" if r["voiced_s"] < overlap.MIN_VOICED_S else "several" if r["share"] >= threshold else "one")
        tp += said == "several" and r["truth"] == "several"
        fp += said == "several" and r["truth"] != "several"
        fn += said != "several" and r["truth"] == "several"
    return tp / max(1, tp + fp), tp / max(1, tp + fn), fp, fn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", action="store_true", help="precision / recall of the tune sources per clip threshold")
    args = ap.parse_args()
    rows, cpu, audio_s = [], 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for source, name, truth, audio, share_true in items(Path(tmp)):
            probs = speech_probabilities(audio)
            t0 = time.process_time()
            res = overlap.voices_heard(audio, speech_probs=probs)
            cpu += time.process_time() - t0
            audio_s += len(audio) / SAMPLE_RATE
            rows.append({"source": source, "name": name, "truth": truth, "verdict": res.verdict,
                         "share": res.overlap_share, "voiced_s": res.voiced_s, "true": share_true})
            ok = "" if truth == "?" else "ok" if res.verdict == truth else "WRONG"
            true = "" if share_true is None else f"{share_true:.2f}"
            print(f"{source:12s} {name:26s} truth={truth:7s} share={res.overlap_share:.3f} (true {true:4s}) "
                  f"voiced={res.voiced_s:4.1f}s verdict={res.verdict:7s} {ok}", flush=True)
    print(f"\nframe score < {overlap.FRAME_SCORE}, clip share >= {overlap.SEVERAL_SHARE} (both chosen on {' + '.join(TUNE)})")
    print(f"{'source':12s} {'items':>5s} {'several':>7s} {'precision':>9s} {'recall':>6s} {'false +/-':>9s} {'verdicts right':>14s}")
    for source in ("synthetic", "composites", "speakers", "shared", "librispeech", "tune", "confirm"):
        sel = [r for r in rows if r["source"] == source or (source == "tune" and r["source"] in TUNE)
               or (source == "confirm" and r["source"] not in TUNE)]
        if not sel:
            continue
        p, r, fp, fn = precision_recall(sel)
        right = sum(x["verdict"] == x["truth"] for x in sel if x["truth"] != "?")
        n = sum(x["truth"] != "?" for x in sel)
        print(f"{source:12s} {len(sel):5d} {sum(x['truth'] == 'several' for x in sel):7d} {p:9.2f} {r:6.2f} "
              f"{fp:4d}/{fn:<4d} {right:7d}/{n}")
    print(f"speed: {cpu / audio_s * 1000:.1f} ms CPU per audio second ({audio_s:.0f} s; VAD not included)")
    if args.sweep:
        tune = [r for r in rows if r["source"] in TUNE]
        for th in np.arange(0.04, 0.31, 0.02):
            p, r, fp, fn = precision_recall(tune, th)
            print(f"tune sweep share >= {th:.2f}: precision {p:.2f} recall {r:.2f} false +/- {fp}/{fn}")


if __name__ == "__main__":
    main()
