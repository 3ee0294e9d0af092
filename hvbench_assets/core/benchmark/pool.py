"""The balanced question pool: which reviewed questions of which clips go into the benchmark, and why the
others do not. Pure: rows in, one decision per row out.

Rules, per task:
- review state: accepted, corrected and not_reviewed go in; unreviewed only when the setting allows it;
  rejected and disputed never (contract 5 of the curation stage);
- one question per (task, clip, target): later duplicates are left out naming the one kept;
- strata: a family with `strata` (its module under core/tasks/families/: HC by the counted number of people,
  3-5 / 6-8 / 9+ with 60 / 60 / 54 in the paper; ER by the truth's polarity, positive : neutral : negative =
  1 : 1 : 2) places each question in one; each stratum gets its share of the task target (largest remainder);
  with `strict_ratio` every stratum shrinks to what the scarcest allows;
- within the quotas, questions are taken in the order of a hash of their ids (so the choice does not follow
  clip order). Their answer letters are balanced afterwards, when the export is assembled (letters.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS, task_info
from hvbench_assets.core.tasks.family import TaskFamily

POOL_CODE_VERSION = "pool-v2"  # v2: letters no longer steer the choice (letters.py balances them)
PAPER_TOTAL = 2475  # questions in the published benchmark
EXPORTABLE = ("accepted", "corrected", "not_reviewed")


def paper_targets() -> dict[str, int]:
    """Per-task targets: the paper's count where it gives one (HC: 174, its three strata); the per-task counts of
    the paper's other tasks are only in a figure, so they share the rest of the 2475 evenly. A family beyond the
    paper's 16 takes the same share on top, leaving the others' alone."""
    given = {t.abbrev: t.paper_count for t in TASKS if t.paper_count is not None}
    shared = [t for t in TASKS if t.from_paper and t.paper_count is None]
    each = (PAPER_TOTAL - sum(given.values())) // len(shared)
    return {t.abbrev: given.get(t.abbrev, each) for t in TASKS}


@dataclass(frozen=True)
class PoolSettings:
    targets: Mapping[str, int] = field(default_factory=paper_targets)  # by abbreviation
    scale: float = 1.0  # multiplies every target (e.g. 0.1 for a tenth of the paper's size)
    # abbrev -> (stratum, weight) replacing the family's strata weights (the strata themselves stay the family's)
    weights: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    strict_ratio: bool = False
    include_unreviewed: bool = False

    def target(self, abbrev: str) -> int:
        return max(0, int(round(self.targets.get(abbrev, 0) * self.scale)))

    def states(self) -> tuple[str, ...]:
        return EXPORTABLE + (("unreviewed",) if self.include_unreviewed else ())

    def strata_weights(self, family: TaskFamily | None) -> list[tuple[str, int]] | None:
        """The weights of a family's strata; None for a family the pool does not stratify."""
        if family is None or family.strata is None:
            return None
        return list(self.weights.get(family.abbrev, family.strata.weights))


def parse_targets(text: str) -> dict[str, int]:
    """"ER=200,HC=174" -> {"ER": 200, "HC": 174}; names or acronyms; unknown tasks are an error."""
    out = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, value = part.partition("=")
        info = task_info(name.strip())
        if info is None or not value.strip().isdigit():
            raise ValueError(f"pool target {part!r}: expected TASK=COUNT with one of the 16 task names or acronyms")
        out[info.abbrev] = int(value)
    return out


@dataclass
class PoolDecision:
    question_id: str
    task: str
    abbrev: str
    video_id: str
    target: str
    stratum: str | None
    selected: bool
    reason: str | None


def _tiebreak(qid: str) -> str:
    return hashlib.sha256(qid.encode()).hexdigest()


def target_key(row: Mapping[str, Any]) -> str:
    """The (task, clip, target) identity: the target tracks, else the rule's target value."""
    tracks = row.get("target_track_ids")
    if tracks:
        return json.dumps(sorted(int(t) for t in tracks))
    return json.dumps((row.get("rule_params") or {}).get("target"), sort_keys=True, default=str)


def stratum_of(row: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(stratum, None), (None, None) for a family without strata, or (None, reason the row cannot be placed)."""
    family = TASK_BY_ABBREV.get(row.get("abbrev") or "")
    if family is None or family.strata is None:
        return None, None
    return family.strata.place(row)


def split_quota(total: int, weights: Sequence[tuple[str, int]]) -> dict[str, int]:
    """`total` split by integer weights, largest remainder first (ties: the order given)."""
    wsum = sum(w for _, w in weights) or 1
    exact = [(name, total * w / wsum) for name, w in weights]
    quota = {name: math.floor(x) for name, x in exact}
    left = total - sum(quota.values())
    for name, _ in sorted(exact, key=lambda e: -(e[1] - math.floor(e[1])))[:left]:
        quota[name] += 1
    return quota


def strata_quotas(target: int, available: Mapping[str, int], weights: Sequence[tuple[str, int]],
                  strict: bool) -> dict[str, int]:
    """Quota per stratum. Not strict: each stratum's share of the target (a short stratum stays short, it does
    not hand its room to the others). Strict: the largest total whose shares every stratum can fill."""
    if not strict:
        return split_quota(target, weights)
    wsum = sum(w for _, w in weights)
    fits = min((available.get(name, 0) * wsum // w for name, w in weights if w), default=0)
    total = min(target, fits)
    while total > 0 and any(q > available.get(n, 0) for n, q in split_quota(total, weights).items()):
        total -= 1
    return split_quota(total, weights)


def select_pool(rows: Sequence[Mapping[str, Any]], settings: PoolSettings) -> list[PoolDecision]:
    """One decision per row. Each row is a reviewed question (reviewed_questions joined with questions):
    question_id, task, abbrev, video_id, state, options, answer, answer_text, target_track_ids, rule_params."""
    out: dict[str, PoolDecision] = {}
    by_task: dict[str, list[tuple[Mapping[str, Any], str | None]]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    allowed = settings.states()
    for row in sorted(rows, key=lambda r: (r["task"], r["video_id"], r["question_id"])):
        qid, key = row["question_id"], target_key(row)
        decision = PoolDecision(qid, row["task"], row["abbrev"], row["video_id"], key, None, False, None)
        out[qid] = decision
        if row.get("state") not in allowed:
            decision.reason = f"review state {row.get('state')}" + (
                " (set include_unreviewed to take it)" if row.get("state") == "unreviewed" else "")
            continue
        if not row.get("options") or not row.get("answer"):
            decision.reason = "no options or answer yet"
            continue
        ident = (row["task"], row["video_id"], key)
        if ident in seen:
            decision.reason = f"same task, clip and target as {seen[ident]}"
            continue
        seen[ident] = qid
        stratum, why = stratum_of(row)
        if why:
            decision.reason = why
            continue
        decision.stratum = stratum
        by_task.setdefault(row["abbrev"], []).append((row, stratum))
    for abbrev, items in by_task.items():
        _choose(abbrev, items, settings, out)
    return [out[r["question_id"]] for r in rows]


def _choose(abbrev: str, items: list[tuple[Mapping[str, Any], str | None]], settings: PoolSettings,
            out: dict[str, PoolDecision]) -> None:
    target = settings.target(abbrev)
    weights = settings.strata_weights(TASK_BY_ABBREV.get(abbrev))
    if weights:
        available: dict[str, int] = {}
        for _, s in items:
            available[s] = available.get(s, 0) + 1
        quotas = strata_quotas(target, available, weights, settings.strict_ratio)
    else:
        quotas = {None: target}
    taken = {s: 0 for s in quotas}
    remaining = []
    for row, stratum in sorted(items, key=lambda it: _tiebreak(it[0]["question_id"])):
        if taken.get(stratum, 0) < quotas.get(stratum, 0):
            out[row["question_id"]].selected = True
            taken[stratum] += 1
        else:
            remaining.append((row, stratum))
    for row, stratum in remaining:
        d = out[row["question_id"]]
        if stratum is not None and taken.get(stratum, 0) >= quotas.get(stratum, 0):
            d.reason = f"stratum {stratum} full ({quotas.get(stratum, 0)} of target {target})"
        else:
            d.reason = f"task target reached ({target})"


def pool_summary(decisions: Sequence[PoolDecision]) -> dict[str, dict[str, Any]]:
    """Per task: available, selected, strata taken, and left-out reasons with counts (for metadata)."""
    out: dict[str, dict[str, Any]] = {}
    for d in decisions:
        s = out.setdefault(d.abbrev, {"available": 0, "selected": 0, "strata": {}, "left_out": {}})
        s["available"] += 1
        if d.selected:
            s["selected"] += 1
            if d.stratum:
                s["strata"][d.stratum] = s["strata"].get(d.stratum, 0) + 1
        else:
            s["left_out"][d.reason] = s["left_out"].get(d.reason, 0) + 1
    return out
