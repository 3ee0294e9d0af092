"""Consistency figures of the report, next to accuracy: does a model answer alike what belongs together?

    groups entirely right   items about the same clip and target person (warehouse `questions`: video_id and
                            target tracks; groups of two or more items) form a group; the share of groups whose
                            every item the model answered right. A model right on 75 % of items at random is
                            entirely right on far fewer groups of 4 (0.75^4 = 32 %); one that truly understands a
                            person is right on the whole group.
    MC and yes/no agree     for every yes/no statement (its source item and option, from the yes/no manifest) that
                            the model answered, and the same model's multiple-choice pick on the source item: the
                            pair agrees when (the pick is the statement's option) equals (the model said yes).
                            Picking B and saying "no" to B's statement is a disagreement. Unparsed replies on
                            either side leave the pair out.

Replies are those of the published option order (rotation 0); a model with several runs (seeds) uses its first
run by run id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from hvbench_assets.core.scoring.report import Table, pct

YES_LETTER = "A"  # the yes/no export's options: A = yes, B = no (core/benchmark/yesno.py)


@dataclass(frozen=True)
class Consistency:
    model: str
    groups: int = 0  # groups of two or more items the model answered every item of
    groups_right: int = 0
    pairs: int = 0  # statement and source item both answered (parsed)
    pairs_agree: int = 0


def first_runs(rows: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    """model -> rotation-0 rows of its first run by run id."""
    by_run: dict[str, list[Mapping]] = defaultdict(list)
    for r in rows:
        if not r.get("rotation"):
            by_run[r["run_id"]].append(r)
    out: dict[str, list[Mapping]] = {}
    for run_id in sorted(by_run):
        out.setdefault(by_run[run_id][0]["model"], by_run[run_id])
    return out


def group_counts(rows: list[Mapping], person_group: Mapping[tuple[str, str], str | None]) -> tuple[int, int]:
    """(groups, groups entirely right) over the groups of 2+ items every one of which has an answered row."""
    members: dict[str, set] = defaultdict(set)
    for key, group in person_group.items():
        if group:
            members[group].add(key)
    right = {(r["task"], str(r["question_id"])): bool(r["correct"]) for r in rows if r["status"] != "failed"}
    full = [keys for keys in members.values() if len(keys) > 1 and keys <= right.keys()]
    return len(full), sum(all(right[k] for k in keys) for keys in full)


def pair_counts(mc_rows: list[Mapping], yesno_rows: list[Mapping], statements: Mapping[str, Mapping]) -> tuple[int, int]:
    """(pairs, pairs that agree): `statements` is the yes/no manifest's statement id -> source_question_id, option."""
    picks = {str(r["question_id"]): r["chosen_original"] for r in mc_rows if r["status"] == "parsed"}
    pairs = agree = 0
    for r in yesno_rows:
        s = statements.get(str(r["question_id"]))
        if r["status"] != "parsed" or s is None or s["source_question_id"] not in picks:
            continue
        pairs += 1
        agree += (picks[s["source_question_id"]] == s["option"]) == (r["chosen_original"] == YES_LETTER)
    return pairs, agree


def consistency(rows: Iterable[Mapping], person_group: Mapping[tuple[str, str], str | None],
                yesno_rows: Iterable[Mapping] = (), statements: Mapping[str, Mapping] | None = None
                ) -> list[Consistency]:
    """Per model of `rows` (multiple-choice replies): its group counts, and with the yes/no replies of the same
    models and the yes/no manifest's statements, its agreement counts."""
    mc, yn = first_runs(rows), first_runs(yesno_rows)
    out = []
    for model, mine in sorted(mc.items()):
        groups, right = group_counts(mine, person_group)
        pairs, agree = pair_counts(mine, yn.get(model, []), statements or {})
        out.append(Consistency(model, groups, right, pairs, agree))
    return out


NOTE = ("Groups entirely right: items about the same clip and target person form a group (2+ items); the share of "
        "groups whose every item the model answered right. MC and yes/no agree: for each yes/no statement the model "
        "answered, whether its yes/no matches its own multiple-choice pick on the source item (picking the "
        "statement's option and saying yes, or another option and saying no); unparsed replies are left out.")


def table(found: list[Consistency]) -> Table:
    def cell(k: int, n: int) -> str:
        return f"{pct(k / n)} ({k}/{n})" if n else "-"

    return Table(["Model", "groups entirely right %", "MC and yes/no agree %"],
                 [[c.model, cell(c.groups_right, c.groups), cell(c.pairs_agree, c.pairs)] for c in found])


def markdown_section(found: list[Consistency]) -> str:
    return "\n".join(["## Consistency", "", NOTE, "", table(found).markdown(), ""])


def html_section(found: list[Consistency]) -> str:
    return f"<h2>Consistency</h2><p>{escape(NOTE)}</p>{table(found).html()}"
