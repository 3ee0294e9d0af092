"""ASD and AVSM through the real assets, offline defaults, on labelled footage: per clip whether each question is
asked, its answer's speaker against the truth, or the rejection's rule and reason.

Sources (`--source`, both by default):
- `speakers`: the speaker development set (../shared/videos/speakers, truth.json);
- `composites`: the scenes of hvbench_assets/testkit/speaker_composites.py (real talking heads side by side under
  chosen voices: voice-overs, two voices, silence, frozen and mouthing faces) and the shared clips with one known
  speaker (five_people_grid, man_talking_head, two_people_talking), as benchmarks/speaker_accuracy.py scores them.

Run: .venv/bin/python benchmarks/speaker_questions.py [--source speakers|composites]"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.testkit.speakers_set import load_truth  # noqa: E402
from hvbench_assets.testkit.speakers_set_chain import composite_outcomes, question_outcomes  # noqa: E402


def speakers_source(folder) -> dict[str, tuple[set, dict]]:
    truth = load_truth()
    return {name: (truth[name].speaker_panels, by) for name, by in question_outcomes(folder).items()}


def report(source: str, outcomes: dict[str, tuple[set, dict]]) -> list[str]:
    """Per clip and task: asked (answer right or WRONG) or rejected with its rule; then the totals."""
    asked: dict[str, list[int]] = {}
    for name, (speakers, by) in outcomes.items():
        for abbrev, (cand, q, labels) in by.items():
            n = asked.setdefault(abbrev, [0, 0])
            if q is None:
                print(f"{name:26} {abbrev:4} rejected  {cand['rule']}: {cand['reason']}" if cand else
                      f"{name:26} {abbrev:4} no candidate row")
                continue
            got = sorted({labels[t] for t in q["target_track_ids"]}, key=str)
            ok = set(got) == set(speakers)
            n[0] += 1
            n[1] += ok
            print(f"{name:26} {abbrev:4} asked     answer {got} ({q['answer_text']}), truth {sorted(speakers, key=str)}: "
                  f"{'right' if ok else 'WRONG'}")
    return [f"{source}: {abbrev} asked on {n} of {len(outcomes)} clips, right {right} of {n}"
            for abbrev, (n, right) in asked.items()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", choices=("speakers", "composites"))
    args = ap.parse_args()
    logging.getLogger("dagster").setLevel(logging.WARNING)
    t0 = time.perf_counter()
    sources = {"speakers": speakers_source, "composites": composite_outcomes}
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        def folder(key: str) -> Path:
            (Path(tmp) / key).mkdir(parents=True)
            return Path(tmp) / key

        for source, run in sources.items():
            if args.source in (None, source):
                print(f"== {source}")
                lines += report(source, run(lambda k, s=source: folder(f"{s}/{k}")))
    print("\n".join(lines) + f"\nin {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
