"""Evaluation statistics measured on generated data with a known truth.

1. Interval coverage: S simulated benchmarks (C clips x Q questions, each clip with its own difficulty, so a
   clip's answers go together); how often the 95 % interval holds the true accuracy, clip-clustered bootstrap vs
   items resampled independently (the old Wilson interval of the report treats items as independent too).
2. Text bias: on generated benchmarks whose truth is the longest option, the shortest, always at C, carries a
   clip's own word, or is drawn like the distractors, the text classifier's held-out accuracy and binomial p next
   to the "longest option" rule and chance; and the same classifier with folds not grouped by clip.

    PYTHONPATH=. .venv/bin/python benchmarks/evaluation_stats.py --sims 200 --clips 60 --per-clip 4
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvbench_assets.core.scoring.metrics import wilson_interval  # noqa: E402
from hvbench_assets.core.scoring.stats import OVERALL, accuracy_intervals  # noqa: E402
from hvbench_assets.core.scoring.textbias import text_bias  # noqa: E402

WORDS = ("the a person man woman child smiles walks runs talks sits stands left right red blue shirt hat jacket "
         "camera looks away toward table door window quickly slowly happy sad angry calm loud quiet").split()


def coverage(sims: int, clips: int, per_clip: int, n_boot: int) -> None:
    rng = np.random.default_rng(0)
    hits = {"clustered bootstrap": 0, "item bootstrap": 0, "Wilson (items)": 0}
    widths = {k: [] for k in hits}
    for s in range(sims):
        # clip difficulty from Beta(2, 2): mean 0.5, the truth; a clip's questions share it
        p = rng.beta(2, 2, size=clips)
        rows = [{"task": "T", "cluster": f"c{c}", "question_id": f"{c}-{q}", "correct": bool(rng.uniform() < p[c])}
                for c in range(clips) for q in range(per_clip)]
        ivs = {"clustered bootstrap": accuracy_intervals(rows, n_boot=n_boot, seed=s)[OVERALL],
               "item bootstrap": accuracy_intervals([{**r, "cluster": r["question_id"]} for r in rows],
                                                    n_boot=n_boot, seed=s)[OVERALL]}
        lo_hi = {k: (iv.low, iv.high) for k, iv in ivs.items()}
        k = sum(r["correct"] for r in rows)
        lo_hi["Wilson (items)"] = wilson_interval(k, len(rows))
        for name, (lo, hi) in lo_hi.items():
            hits[name] += lo <= 0.5 <= hi
            widths[name].append(hi - lo)
    print(f"## Interval coverage: {sims} benchmarks, {clips} clips x {per_clip} questions, true accuracy 0.50, "
          f"{n_boot} resamples\n")
    print("| interval | coverage of the true accuracy | mean width |\n|---|---|---|")
    for name in hits:
        print(f"| {name} | {100 * hits[name] / sims:.1f} % | {100 * np.mean(widths[name]):.1f} pts |")


def generated(kind: str, clips: int, per_clip: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for c in range(clips):
        for q in range(per_clip):
            opts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) for _ in range(4)]
            if kind == "clip word":
                opts = [f"{o} clipword{rng.choice('abcdefghijklmnopqrstuvwxyz')}{rng.choice('cdefghijklmnopqrstuvwxyz')}"
                        for o in opts]
            if kind == "longest":
                ans = max(range(4), key=lambda i: (len(opts[i]), -i))
            elif kind == "shortest":
                ans = min(range(4), key=lambda i: (len(opts[i]), i))
            elif kind == "always C":
                ans = 2
            else:
                ans = rng.randrange(4)
            if kind == "clip word":
                opts[ans] = opts[ans].rsplit(" ", 1)[0] + f" clipword{chr(97 + c % 26)}{chr(97 + c // 26)}"
            items.append({"task": "T", "question_id": f"{c}-{q}", "cluster": f"clip{c}",
                          "question": "What does the person do?", "options": opts, "answer_index": ans})
    return items


def bias(clips: int, per_clip: int) -> None:
    print(f"\n## Text bias: 4 options, {clips} clips x {per_clip} questions, chance 25 %\n")
    print("| truth | classifier (clip folds) | p | longest-option rule | classifier, folds ignore clips |\n"
          "|---|---|---|---|---|")
    for kind in ("longest", "shortest", "always C", "clip word", "like the distractors"):
        items = generated(kind, clips, per_clip)
        t = text_bias(items).tasks["T"]
        loose = text_bias([{**i, "cluster": i["question_id"]} for i in items]).tasks["T"]
        rule = np.mean([max(range(4), key=lambda j: len(i["options"][j])) == i["answer_index"] for i in items])
        print(f"| {kind} | {100 * t.accuracy:.1f} % | {t.p_value:.2g} | {100 * rule:.1f} % | "
              f"{100 * loose.accuracy:.1f} % |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--clips", type=int, default=60)
    ap.add_argument("--per-clip", type=int, default=4)
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args()
    coverage(args.sims, args.clips, args.per_clip, args.bootstrap)
    bias(args.clips, args.per_clip)


if __name__ == "__main__":
    main()
