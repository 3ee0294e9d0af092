"""How the review goes: seconds per decision, decisions made too fast to have watched the clip, and the share
of descriptive questions kept without an edit beside the paper's figures (pure; the app and `hvbench
review-stats` print them)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from hvbench_assets.core.tasks.catalog import TASKS

DEFAULT_FAST_FLOOR_S = 5.0
# The paper's manual-labour study (its Table 2(c)): the share of generated descriptive questions whose options
# already held the right answer (the human only picks it, no text written), per task and on average; and its
# annotators' average time per question (3 minutes).
PAPER_NO_EDIT = {t.abbrev: t.paper_no_edit for t in TASKS if t.paper_no_edit is not None}  # the task catalog
PAPER_NO_EDIT_AVERAGE = 0.723
PAPER_SECONDS_PER_QUESTION = 180.0


def is_fast(decision: Mapping[str, Any], duration_s: float | None, floor_s: float = DEFAULT_FAST_FLOOR_S) -> bool:
    """Decided in less than min(clip length, floor) seconds with the video never played: nobody watched it.
    A decision that sent no watched time counts as unplayed; one that sent no time spent is not judged."""
    spent = decision.get("seconds_spent")
    if spent is None:
        return False
    limit = min(duration_s, floor_s) if duration_s else floor_s
    return spent < limit and not (decision.get("watched_s") or 0) > 0


def decision_times(decisions: Iterable[Mapping[str, Any]], durations: Mapping[str, float],
                   floor_s: float = DEFAULT_FAST_FLOOR_S) -> list[dict[str, Any]]:
    """Per reviewer and task: decisions, median seconds per decision, and how many were too fast (is_fast)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for d in decisions:
        groups.setdefault((d["reviewer"], d.get("abbrev") or ""), []).append(d)
    out = []
    for (reviewer, abbrev), ds in sorted(groups.items()):
        times = [float(d["seconds_spent"]) for d in ds if d.get("seconds_spent") is not None]
        out.append({"reviewer": reviewer, "abbrev": abbrev, "decisions": len(ds),
                    "median_s": statistics.median(times) if times else None,
                    "fast": sum(is_fast(d, durations.get(d.get("video_id")), floor_s) for d in ds)})
    return out


def fast_decisions(decisions: Iterable[Mapping[str, Any]], durations: Mapping[str, float],
                   floor_s: float = DEFAULT_FAST_FLOOR_S) -> list[dict[str, Any]]:
    """The decisions is_fast marks, newest first, with the clip length they are judged against."""
    out = [{**d, "duration_s": durations.get(d.get("video_id"))} for d in decisions
           if is_fast(d, durations.get(d.get("video_id")), floor_s)]
    return sorted(out, key=lambda d: str(d.get("created_at")), reverse=True)


def no_edit_shares(reviewed: Iterable[Mapping[str, Any]], decisions: Iterable[Mapping[str, Any]],
                   descriptive: Iterable[str]) -> list[dict[str, Any]]:
    """Per descriptive task: settled questions (accepted, corrected or rejected), the share needing no edit (the
    right answer was among the options: accepted, or corrected to another option; a written answer or a
    rejection is an edit, as in the paper), the median seconds per decision, and the paper's figures beside."""
    wanted = list(descriptive)
    settled: dict[str, list[str]] = {a: [] for a in wanted}
    for r in reviewed:
        if r.get("abbrev") in settled and r["state"] in ("accepted", "corrected", "rejected"):
            written = any((o or {}).get("origin") == "review" for o in r.get("options") or [])
            settled[r["abbrev"]].append("no_edit" if r["state"] == "accepted" or (r["state"] == "corrected" and not written)
                                        else "edit")
    times: dict[str, list[float]] = {a: [] for a in wanted}
    for d in decisions:
        if d.get("abbrev") in times and d.get("seconds_spent") is not None:
            times[d["abbrev"]].append(float(d["seconds_spent"]))
    out = []
    for a in wanted:
        n = len(settled[a])
        out.append({"abbrev": a, "settled": n, "no_edit": settled[a].count("no_edit"),
                    "share": settled[a].count("no_edit") / n if n else None, "paper_share": PAPER_NO_EDIT.get(a),
                    "median_s": statistics.median(times[a]) if times[a] else None})
    every = [s for a in wanted for s in settled[a]]
    all_times = [t for a in wanted for t in times[a]]
    out.append({"abbrev": "all", "settled": len(every), "no_edit": every.count("no_edit"),
                "share": every.count("no_edit") / len(every) if every else None, "paper_share": PAPER_NO_EDIT_AVERAGE,
                "median_s": statistics.median(all_times) if all_times else None,
                "paper_median_s": PAPER_SECONDS_PER_QUESTION})
    return out
