"""The open-ended section of the report: who graded each reply, and how often the judge agrees with the matcher
and with people.

Per model (run): replies graded by the deterministic matcher, by the judge (the matcher could not), by neither
(counted wrong); and on the replies both graded, the share where the judge's right/wrong equals the matcher's. The
matcher is exact on its kinds, so that share measures the judge on answers it can be checked on; it says nothing
direct about the judge on free-text references, which only it grades. That is what the human sample is for: replies
graded in the review app's grade queue (core/curation/grading.py), a random sample of every kind, against which the
judge and the matcher are each compared on the replies they graded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from hvbench_assets.core.scoring.open_match import UNGRADABLE, is_open_reply
from hvbench_assets.core.scoring.report import Table, pct

ALL = "all runs"


@dataclass(frozen=True)
class Agreement:
    both: int  # replies both graders graded (right or wrong)
    agree: int  # of those, the same verdict

    @property
    def share(self) -> float | None:
        return self.agree / self.both if self.both else None

    def cell(self, none: str) -> str:
        return f"{pct(self.share)} ({self.agree}/{self.both})" if self.both else none


@dataclass(frozen=True)
class OpenGrading:
    label: str
    replies: int  # answered replies (failed calls left out)
    right: int
    by_match: int  # graded by the matcher
    by_judge: int  # the matcher could not, the judge did
    ungraded: int  # neither: counted wrong
    judge_match: Agreement  # the judge against the matcher
    humans: int = 0  # replies with a human verdict (right or wrong)
    judge_human: Agreement = Agreement(0, 0)
    match_human: Agreement = Agreement(0, 0)

    @property
    def both(self) -> int:
        return self.judge_match.both

    @property
    def agree(self) -> int:
        return self.judge_match.agree

    @property
    def agreement(self) -> float | None:
        return self.judge_match.share


def _graded(verdict: str | None) -> bool:
    return verdict is not None and verdict != UNGRADABLE


def agreement(pairs: list[tuple[str | None, str | None]]) -> Agreement:
    """Of the pairs where both sides graded (right or wrong), how many say the same."""
    both = [(a, b) for a, b in pairs if _graded(a) and _graded(b)]
    return Agreement(len(both), sum(a == b for a, b in both))


def _count(label: str, rows: list[Mapping], human: Mapping[tuple[str, str, str], str]) -> OpenGrading:
    said = [(human.get((r["run_id"], r["task"], str(r["question_id"]))), r) for r in rows]
    return OpenGrading(
        label, len(rows), sum(bool(r["correct"]) for r in rows), sum(_graded(r["grade"]) for r in rows),
        sum(not _graded(r["grade"]) and _graded(r.get("judge_verdict")) for r in rows),
        sum(not _graded(r["grade"]) and not _graded(r.get("judge_verdict")) for r in rows),
        agreement([(r["grade"], r.get("judge_verdict")) for r in rows]),
        sum(_graded(h) for h, _ in said),
        agreement([(h, r.get("judge_verdict")) for h, r in said]),
        agreement([(h, r["grade"]) for h, r in said]))


def open_grading(rows: Iterable[Mapping], labels: Mapping[str, str],
                 human: Mapping[tuple[str, str, str], str] | None = None) -> list[OpenGrading]:
    """One entry per run with open-item replies (`labels`: run id -> report label), then `all runs` when several.
    `human`: (run_id, task, question_id) -> the human verdict (core/curation/grading.human_verdicts)."""
    mine = [r for r in rows if is_open_reply(r)]
    runs = sorted({r["run_id"] for r in mine}, key=lambda i: labels.get(i, i))
    human = human or {}
    out = [_count(labels.get(i, i), [r for r in mine if r["run_id"] == i], human) for i in runs]
    return out + [_count(ALL, mine, human)] if len(out) > 1 else out


HEADERS = ["Model", "replies", "right %", "graded by matcher", "by judge only", "by neither (wrong)",
           "judge agrees with matcher % (of both graded)", "graded by people",
           "judge agrees with people %", "matcher agrees with people %"]
NOTE = ("Open-ended replies are graded by the deterministic matcher where the item has a structured truth (a count, "
        "a second, a person number, emotion words, an attitude, an emotion sequence), else by the judge; a reply "
        "neither can grade counts wrong. With a judge, it also grades what the matcher graded: the judge-matcher "
        "column is the share of those replies where the two give the same verdict, with their count. People grade a "
        "random sample of the replies in the review app's grade queue (hvbench review, /grade), seeing what the "
        "judge sees; the last two columns compare the judge and the matcher with them on the sampled replies each "
        "graded (a reply a person could not tell, or two people graded differently, is left out).")


def table(found: list[OpenGrading]) -> Table:
    return Table(HEADERS, [[g.label, str(g.replies), pct(g.right / g.replies if g.replies else None), str(g.by_match),
                            str(g.by_judge), str(g.ungraded), g.judge_match.cell("- (no judge or none both)"),
                            str(g.humans), g.judge_human.cell("-"), g.match_human.cell("-")] for g in found])


def markdown_section(found: list[OpenGrading]) -> str:
    return "\n".join(["## Open-ended grading", "", NOTE, "", table(found).markdown(), ""])


def html_section(found: list[OpenGrading]) -> str:
    return f"<h2>Open-ended grading</h2><p>{escape(NOTE)}</p>{table(found).html()}"
