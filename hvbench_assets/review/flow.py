"""The start page's list of the latest human actions (decisions and annotations) and whether the graph has taken
them in yet (the sensors' work)."""

from __future__ import annotations

from typing import Any

from hvbench_assets.core.curation.live import decode
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.tasks.catalog import ANNOTATED
from hvbench_assets.core.tasks.store import TASK_CANDIDATES
from hvbench_assets.core.warehouse import Warehouse


def flow(wh: Warehouse, s: dict[str, list[dict]]) -> list[dict[str, Any]]:
    """The latest human actions and whether the graph has taken them in yet (the sensors' work). Reads the
    reviewed_questions and task_candidates rows of those 8 + 8 actions only (the whole tables took 7 s at
    20,000 questions)."""
    recent = s["decisions"][-8:]
    reviewed = {r["question_id"]: r for r in _rows_where(wh, REVIEWED_QUESTIONS, ("question_id",),
                                                          [(d["question_id"],) for d in recent])}
    out = []
    for d in recent:
        r = reviewed.get(d["question_id"])
        taken = r is not None and d["decision_id"] in (r["decision_ids"] or [])
        # superseded: made on another version, or the row was rebuilt after it without taking it
        replaced = r is not None and not taken and (r["content_hash"] != d["content_hash"] or bool(
            r["materialized_at"] and r["materialized_at"] >= d["created_at"]))
        out.append({"when": d["created_at"], "who": d["reviewer"], "what": f"{d['action']} {d['abbrev']}",
                    "question_id": d["question_id"],
                    "result": f"reviewed_questions: {r['state']}" if taken else
                    "superseded (a newer decision or version)" if replaced else "waiting for review_sensor"})
    latest = s["annotations"][-8:]
    built_from = s["memo"]("built_from", lambda: {a: q for q in s["questions"] for a in q.get("annotation_ids") or []},
                           ("questions",))
    by_ann = {a["annotation_id"]: built_from[a["annotation_id"]] for a in latest if a["annotation_id"] in built_from}
    tasks_of = {k: tuple(a for a, kind in ANNOTATED.items() if kind == k) for k in set(ANNOTATED.values())}
    keys = sorted({(a["video_id"], t) for a in latest if by_ann.get(a["annotation_id"]) is None
                   for t in tasks_of.get(a["kind"], ())})
    verdicts = {(c["video_id"], c["abbrev"]): c for c in _rows_where(wh, TASK_CANDIDATES, ("video_id", "abbrev"), keys)}
    for a in latest:
        q = by_ann.get(a["annotation_id"])
        if q is not None:
            result = f"{q['abbrev']} question rebuilt ({q['status']})"
        else:  # rebuilt after the annotation without a question: the rule dropped it (reason says why)
            later = [v for t in tasks_of.get(a["kind"], ()) if (v := verdicts.get((a["video_id"], t))) and v["materialized_at"]
                     and v["materialized_at"] >= a["created_at"] and v["status"] != "awaiting_annotation"]
            result = ("; ".join(f"{v['abbrev']} {v['status']}: {v['reason']}" for v in later) if later
                      else "waiting for annotation_sensor")
        out.append({"when": a["created_at"], "who": a["annotator"], "what": f"annotation {a['kind']} {a['video_id']}",
                    "question_id": q["question_id"] if q else None, "result": result})
    return sorted(out, key=lambda r: r["when"], reverse=True)[:12]


def _rows_where(wh: Warehouse, spec, columns: tuple[str, ...], values: list[tuple]) -> list[dict[str, Any]]:
    """Rows of `spec` whose `columns` equal one of `values` (a handful), JSON decoded; [] when the table is absent."""
    if not values or not wh.has_table(spec.name):
        return []
    if len(columns) == 1:  # IN: a third of the time of an OR chain on 20,000 rows
        where = f'"{columns[0]}" IN ({", ".join("?" * len(values))})'
    else:
        where = " OR ".join(["(" + " AND ".join(f'"{c}" = ?' for c in columns) + ")"] * len(values))
    rows = wh.query(f'SELECT * FROM "{spec.name}" WHERE {where}', [v for vs in values for v in vs])
    return decode(spec, rows)
