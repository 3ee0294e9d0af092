"""The open-ended section of the report: who graded each reply, and how often the judge agrees with the matcher.

Per model (run): replies graded by the deterministic matcher, by the judge (the matcher could not), by neither
(counted wrong); and on the replies both graded, the share where the judge's right/wrong equals the matcher's. The
matcher is exact on its kinds, so that share measures the judge on answers it can be checked on; it says nothing
direct about the judge on free-text references, which only it grades.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from hvbench_assets.core.scoring.open_match import UNGRADABLE
from hvbench_assets.core.scoring.report import Table, pct

ALL = "all runs"


@dataclass(frozen=True)
class OpenGrading:
    label: str
    replies: int  # answered replies (failed calls left out)
    right: int
    by_match: int  # graded by the matcher
    by_judge: int  # the matcher could not, the judge did
    ungraded: int  # neither: counted wrong
    both: int  # graded by both the matcher and the judge
    agree: int  # of those, the same verdict

    @property
    def agreement(self) -> float | None:
        return self.agree / self.both if self.both else None


def _graded(verdict: str | None) -> bool:
    return verdict is not None and verdict != UNGRADABLE


def _count(label: str, rows: list[Mapping]) -> OpenGrading:
    both = [r for r in rows if _graded(r["grade"]) and _graded(r.get("judge_verdict"))]
    return OpenGrading(
        label, len(rows), sum(bool(r["correct"]) for r in rows), sum(_graded(r["grade"]) for r in rows),
        sum(not _graded(r["grade"]) and _graded(r.get("judge_verdict")) for r in rows),
        sum(not _graded(r["grade"]) and not _graded(r.get("judge_verdict")) for r in rows),
        len(both), sum(r["grade"] == r["judge_verdict"] for r in both))


def open_grading(rows: Iterable[Mapping], labels: Mapping[str, str]) -> list[OpenGrading]:
    """One entry per run with open-item replies (`labels`: run id -> report label), then `all runs` when several."""
    mine = [r for r in rows if r.get("grade") and r.get("status") != "failed" and not r.get("rotation")]
    runs = sorted({r["run_id"] for r in mine}, key=lambda i: labels.get(i, i))
    out = [_count(labels.get(i, i), [r for r in mine if r["run_id"] == i]) for i in runs]
    return out + [_count(ALL, mine)] if len(out) > 1 else out


HEADERS = ["Model", "replies", "right %", "graded by matcher", "by judge only", "by neither (wrong)",
           "judge agrees with matcher % (of both graded)"]
NOTE = ("Open-ended replies are graded by the deterministic matcher where the item has a structured truth (a count, "
        "a second, a person number, emotion words, an attitude, an emotion sequence), else by the judge; a reply "
        "neither can grade counts wrong. With a judge, it also grades what the matcher graded: the last column is "
        "the share of those replies where the two give the same verdict, with their count.")


def table(found: list[OpenGrading]) -> Table:
    return Table(HEADERS, [[g.label, str(g.replies), pct(g.right / g.replies if g.replies else None), str(g.by_match),
                            str(g.by_judge), str(g.ungraded),
                            f"{pct(g.agreement)} ({g.agree}/{g.both})" if g.both else "- (no judge or none both)"]
                           for g in found])


def markdown_section(found: list[OpenGrading]) -> str:
    return "\n".join(["## Open-ended grading", "", NOTE, "", table(found).markdown(), ""])


def html_section(found: list[OpenGrading]) -> str:
    return f"<h2>Open-ended grading</h2><p>{escape(NOTE)}</p>{table(found).html()}"
