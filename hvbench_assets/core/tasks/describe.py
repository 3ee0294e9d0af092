"""Questions in plain text: options, answer, and where each fact came from (labels, rule, model calls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.tasks.catalog import task_info
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.warehouse import Warehouse


def question_lines(q: Mapping[str, Any]) -> list[str]:
    head = f"[{q['abbrev']}] {q['video_id']}  {q['question_id']}  ({q['status']}{', provisional' if q.get('provisional') else ''})"
    if not q.get("options"):
        return [head, "  waiting for a human annotation"]
    lines = [head, f"  Q: {q['question']}"]
    for o in q["options"]:
        mark = "  <- answer" if o["letter"] == q["answer"] else ""
        lines.append(f"    {o['letter']}. {o['text']}  [{o['origin']}]{mark}")
    measured = (q.get("rule_params") or {}).get("measured") or {}
    lines.append(f"  rule: {q['rule']} v{q['rule_version']}  measured: "
                 + ", ".join(f"{k}={v}" for k, v in measured.items()))
    lines.append("  from: " + "; ".join(label_facts(q.get("label_rows") or [])))
    if q.get("call_ids"):
        lines.append("  model calls: " + ", ".join(c[:12] for c in q["call_ids"]))
    if q.get("annotation_ids"):
        lines.append("  annotations: " + ", ".join(q["annotation_ids"]))
    lines.append(f"  video: {resolve(q['video_path']) or '-'}")
    return lines


def label_facts(refs) -> list[str]:
    """One phrase per label table: which rows (tracks), produced by which backend and code version, when."""
    groups: dict[tuple, list] = {}
    for r in refs:
        key = (r["label"], r["table"], r.get("backend") or "-", r.get("code_version"), str(r.get("materialized_at"))[:19])
        groups.setdefault(key, []).append(r.get("track_id"))
    out = []
    for (label, table, backend, version, at), tids in groups.items():
        ids = [t for t in tids if t is not None]
        which = f" tracks {','.join(map(str, ids))}" if len(ids) > 1 else f" track {ids[0]}" if ids else ""
        out.append(f"{label} {table}{which} ({backend}, v{version}, {at})")
    return out


def questions_text(wh: Warehouse, task: str | None = None, clip: str | None = None, candidates: bool = False) -> str:
    where: dict[str, Any] = {}
    if task:
        info = task_info(task)
        if info is None:
            return f"unknown task {task!r}"
        where["task"] = info.name
    if clip:
        where["video_id"] = clip
    qs = wh.rows(QUESTIONS, order_by="task, video_id", **where)
    lines = []
    for q in qs:
        lines += question_lines(q) + [""]
    made = sum(1 for q in qs if q.get("options"))
    lines.append(f"{made} question(s), {len(qs) - made} waiting for annotation")
    if candidates:
        lines.append("\n== verdicts per clip and task ==")
        lines += verdict_lines(wh.rows(TASK_CANDIDATES, order_by="video_id, task", **where))
    return "\n".join(lines)


def verdict_lines(cands) -> list[str]:
    """One line per clip and verdict; tasks sharing a status and reason (e.g. every task blocked by the same
    missing model) share a line, so the list reads at a glance."""
    groups: dict[tuple, list[str]] = {}
    for c in cands:
        groups.setdefault((c["video_id"], c["status"], c["reason"] or ""), []).append(c["abbrev"])
    return [f"{vid:24s} {status:20s} {','.join(abbrevs):14s} {reason}".rstrip()
            if len(abbrevs) == 1 else f"{vid:24s} {status:20s} {','.join(abbrevs)}\n{'':46s}{reason}".rstrip()
            for (vid, status, reason), abbrevs in groups.items()]


def task_table_markdown() -> str:
    """The task table of docs/tasks.md, from the catalog (a test keeps the doc equal to this)."""
    from hvbench_assets.core.tasks.catalog import TASKS
    from hvbench_assets.core.tasks.labels import PAPER_LABEL

    def labels(names):
        return ", ".join(f"{PAPER_LABEL[n]} `{n}`" for n in names) or "-"

    lines = ["| asset | task | labels (Table 9) | labels our rules add | video | truth |", "|---|---|---|---|---|---|"]
    for f in TASKS:
        ours = f"{labels(f.ours)}: {f.why_ours}" if f.ours else "-"
        lines.append(f"| `{f.asset}` | {f.abbrev} | {labels(f.labels)} | {ours} | {f.marking} | {f.truth} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(task_table_markdown())
