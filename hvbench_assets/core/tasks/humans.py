"""Only real people are people: tracks whose `human_verdicts` row says the face is drawn, animated, a statue,
printed or on a screen (or that have no verdict) are taken out of a clip's labels before any task selects,
and the candidate row says which tracks were skipped and why."""

from __future__ import annotations

from dataclasses import replace

from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import Verdict, reject

LABEL = "human_verdicts"
RULE_VERSION = "1"  # in every task asset's code version (defs/tasks/assets.py)


def real_people(labels: ClipLabels) -> tuple[ClipLabels, dict[int, str]]:
    """(labels holding only the tracks judged real people, {skipped track id: why}). Labels read without
    human verdicts (hand-made rows in tests) come back unchanged."""
    if LABEL not in labels.rows:
        return labels, {}
    verdicts = labels.by_track(LABEL)
    skipped = {}
    for t in labels.tracks:
        v = verdicts.get(t.track_id)
        if v is None or v.get("status") != "ok":
            skipped[t.track_id] = f"no real-human verdict ({(v or {}).get('reason') or 'no row'})"
        elif not v.get("is_human"):
            skipped[t.track_id] = f"not a real person (score {v.get('score', 0):.2f} by {v.get('method')})"
    if not skipped:
        return labels, {}
    rows = dict(labels.rows)
    l2 = labels.one("person_count")
    if l2 and l2.get("status") == "ok":
        groups = [list(g) for g in l2.get("persons") or []]
        kept = [[t for t in g if t not in skipped] for g in groups]
        gone = sum(1 for g, k in zip(groups, kept) if g and not k)
        rows["person_count"] = [{**l2, "persons": [k for k in kept if k],
                                 "person_count": max(0, int(l2.get("person_count") or 0) - gone)}]
    return replace(labels, rows=rows, tracks=[t for t in labels.tracks if t.track_id not in skipped]), skipped


def noted(verdict: Verdict, skipped: dict[int, str], labels: ClipLabels) -> Verdict:
    """The family's verdict with the skipped tracks in `measured` (its reason stays the family's); a clip
    left with no real person is rejected by the `real_human` rule instead of the family's own (which would
    only say "no face")."""
    if not skipped:
        return verdict
    measured = {**verdict.measured, "not_real_people": {str(t): why for t, why in sorted(skipped.items())}}
    if not labels.tracks and not verdict.selected:
        why = "; ".join(f"track {t}: {w}" for t, w in sorted(skipped.items()))
        return reject("real_human", f"no real person in the clip ({why})", measured)
    return replace(verdict, measured=measured)
