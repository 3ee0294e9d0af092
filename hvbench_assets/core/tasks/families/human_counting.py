"""HC, Human Count: how many different people appear. A clip where L2 estimates 3 or more people; the truth is a
human's count (`hvbench annotate count`), the distractors counts within 4 of it. The pool balances HC by the
counted people in the paper's three strata (3-5 / 6-8 / 9+: 60 / 60 / 54 questions, its 174)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.base import BuildContext, Draft, Pending
from hvbench_assets.core.tasks.family import PERSON, Annotation, Evidence, Strata, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Option, Verdict, check_range, person_count

# the paper's strata of people counted: (name, fewest, most or None, its questions)
STRATA = (("3-5", 3, 5, 60), ("6-8", 6, 8, 60), ("9+", 9, None, 54))


@dataclass(frozen=True)
class HcParams:
    min_people: int = 3
    spread: int = 4  # distractors within +-spread of the true count, never below 1


def stratum(n: int | None) -> str | None:
    return next((name for name, lo, hi, _ in STRATA if n is not None and n >= lo and (hi is None or n <= hi)), None)


def select_hc(labels: ClipLabels, p: HcParams) -> Verdict:
    m: dict = {}
    n = person_count(labels)
    if v := check_range(m, "people", "people", n, lo=p.min_people):
        return v
    m["stratum"] = stratum(n)
    return Verdict(True, "hc", f"L2 estimates {n} people (stratum {m['stratum']}); the count is a human's", m)


def count_distractors(truth: int, spread: int, rng) -> list[int]:
    pool = [k for k in range(max(1, truth - spread), truth + spread + 1) if k != truth]
    return rng.sample(pool, 3)


def build_hc(ctx: BuildContext) -> Draft | Pending:
    ann = ctx.annotation
    if ann is None:
        return Pending("awaiting_annotation", f"needs a human count: hvbench annotate count {ctx.labels.video_id} N")
    truth = int(ann["value"]["count"])
    if truth < 1:
        return Pending("rejected", f"annotated count {truth}: no person to count", annotation_ids=[ann["annotation_id"]])
    return Draft(
        question="How many different people appear in this video?",
        truth=Option(str(truth), "truth"),
        distractors=[Option(str(k), "rule") for k in count_distractors(truth, ctx.params.spread, ctx.rng)],
        marking={"kind": "none"}, annotation_ids=[ann["annotation_id"]],
        details={"annotated_count": truth, "l2_estimate": person_count(ctx.labels)},
    )


def counted_people(row: Mapping[str, Any]) -> int | None:
    """A question's counted people: the (human) answer text when it is a number, else L2's measured count."""
    text = str(row.get("answer_text") or "").strip()
    if text.isdigit():
        return int(text)
    people = ((row.get("rule_params") or {}).get("measured") or {}).get("people")
    return int(people) if isinstance(people, (int, float)) else None


def count_stratum(row: Mapping[str, Any]) -> tuple[str | None, str | None]:
    n = counted_people(row)
    if (name := stratum(n)) is not None:
        return name, None
    return None, f"people={n} outside the HC strata {', '.join(s[0] for s in STRATA)}"


FAMILY = TaskFamily(
    name="Human_Count", abbrev="HC", category=PERSON, asset="human_counting",
    labels=("human_tracks", "person_count"), marking="none",
    select=select_hc, build=build_hc, params=HcParams(),
    asks=Asks("a number of people", (asks.COUNT, r"\b(?:people|persons?|individuals)\b")), answer_kind="count",
    truth="human count", answer_from="a human count (annotations)",
    annotation=Annotation("count", lambda value: ("count", value.get("count"))),
    evidence=Evidence("clip", "none"),
    guideline="Count every different person seen at any moment, the same person once even if they leave and "
              "return. Pause and step through crowded stretches.",
    paper_count=sum(n for *_, n in STRATA), strata=Strata(tuple((name, n) for name, _, _, n in STRATA), count_stratum),
)
