"""ASD and AVSM on the speaker development set (../shared/videos/speakers) through the real assets, offline defaults:
per clip whether each question is asked, its answer's panel against the truth, or the rejection's rule and reason.

Run: .venv/bin/python benchmarks/speaker_questions.py"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.testkit.speakers_set import load_truth  # noqa: E402
from hvbench_assets.testkit.speakers_set_chain import question_outcomes  # noqa: E402


def main() -> None:
    logging.getLogger("dagster").setLevel(logging.WARNING)
    t0 = time.perf_counter()
    truth = load_truth()
    with tempfile.TemporaryDirectory() as tmp:
        def folder(key: str) -> Path:
            (Path(tmp) / key).mkdir()
            return Path(tmp) / key

        outcomes = question_outcomes(folder)
    asked = {abbrev: [0, 0] for by in outcomes.values() for abbrev in by}  # asked, right
    for name, by in outcomes.items():
        for abbrev, (cand, q, panels) in by.items():
            if q is None:
                print(f"{name:26} {abbrev:4} rejected  {cand['rule']}: {cand['reason']}")
                continue
            got = sorted({panels[t] for t in q["target_track_ids"]})
            ok = set(got) == truth[name].speaker_panels
            asked[abbrev][0] += 1
            asked[abbrev][1] += ok
            print(f"{name:26} {abbrev:4} asked     answer panel {got} ({q['answer_text']}): {'right' if ok else 'WRONG'}")
    for abbrev, (n, right) in asked.items():
        print(f"{abbrev}: asked on {n} of {len(outcomes)} clips, right {right} of {n}")
    print(f"in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
