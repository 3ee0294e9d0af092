"""Evidence behind the offline transcript's language claim: pocketsphinx's duration-weighted word
confidence on espeak-ng speech in English, Mandarin and Spanish and on the real English clips, and the
resulting row (language, status). For the English sentences the word error rate of the recognised text
against the sentence spoken says whether the text could be trusted if the row claimed `en`.
Run: .venv/bin/python benchmarks/transcript_language.py"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.core.audio import labels  # noqa: E402
from hvbench_assets.core.audio.asr import PocketsphinxTranscriber  # noqa: E402
from hvbench_assets.core.audio.tags import VadEnergyTagger  # noqa: E402
from hvbench_assets.core.media import load_audio  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
SENTENCES = {
    "en-us": ("The weather is lovely today and we will walk to the park after lunch with our friends.",
              "I think that we should go home now because it is getting late and I am very tired.",
              "My name is John and I live in California with my wife and two children."),
    "cmn": ("今天天气很好，我们下午一起去公园散步，然后去吃晚饭。", "我们的老师说明天要考试，大家都应该好好准备一下。",
            "我叫小明，我和我的妻子还有两个孩子住在北京。"),
    "es": ("El tiempo es muy agradable hoy y vamos a caminar al parque después del almuerzo con nuestros amigos.",
           "Creo que deberíamos ir a casa ahora porque se está haciendo tarde y estoy muy cansado.",
           "Me llamo Juan y vivo en Madrid con mi esposa y mis dos hijos."),
}


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level edit distance / reference words (case and punctuation ignored)."""
    ref, hyp = (re.findall(r"[a-z']+", t.lower()) for t in (reference, hypothesis))
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[-1] / max(1, len(ref))


def main() -> None:
    asr, tagger = PocketsphinxTranscriber(), VadEnergyTagger()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for voice, texts in SENTENCES.items():
            for i, text in enumerate(texts):
                wav = Path(tmp) / f"{voice}{i}.wav"
                subprocess.run(["espeak-ng", "-v", voice, "-w", str(wav), text], check=True, capture_output=True)
                cases.append((f"espeak {voice} #{i + 1}", load_audio(wav), text if voice == "en-us" else None))
    cases += [(f"real: {c.stem}", load_audio(c), None) for c in sorted(SHARED.glob("*.mp4"))]
    print("| input | word confidence | words | language | status | WER | text (first 60 chars) |")
    print("|---|---|---|---|---|---|---|")
    for name, audio, reference in cases:
        row = labels.transcript_row(asr, audio, tagger.tag(audio).speech_segments)
        ev = row["language_evidence"] or {}
        wer = f"{word_error_rate(reference, row['text'] or ''):.2f}" if reference else "-"
        print(f"| {name} | {ev.get('confidence', 0):.2f} | {ev.get('words', 0)} | {row['language']} | {row['status']} | "
              f"{wer} | {row['text'][:60]} |")
    print(f"\nrule: language en when confidence >= {asr.min_confidence} over >= {asr.min_words} words")


if __name__ == "__main__":
    main()
