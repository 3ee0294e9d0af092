"""`explain <question_id>`: everything a question was built from and everything that happened to it since,
as one JSON-able dict (`explain_question`) and as plain text (`format_explanation`).

It is a join over ids the rows already carry (questions.label_rows, call_ids, annotation_ids), not a
search: source file and range, clip, selection verdict, label rows, model calls, synthesis steps, pool,
blind answers, review decisions, the evaluation's flags with what review made of them, and evaluation replies. A table that does not exist yet is reported as
missing rather than failing, so the same reader works before synthesis, curation or evaluation ran.
Reading the evaluation tables (core/evaluation/tables.py, a floor up) is the point: the chain ends there.

`answer_basis` names the label rows the right answer was read from (for ASD the L7 row of the track the
answer letter marks), so a wrong answer leads straight to the row that caused it. The question shows the stored
option order; the export section shows the order and answer letter the assembled benchmark gave it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from hvbench_assets.core.benchmark.answer_basis import answer_tracks, row_changed
from hvbench_assets.core.benchmark.evidence import build_evidence, load_clip_facts
from hvbench_assets.core.benchmark.tables import BLIND_ANSWERS, EXPORT_ITEMS, LEAKAGE_VERDICTS, QUESTION_POOL
from hvbench_assets.core.curation.flags import flag_outcome
from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS
from hvbench_assets.core.ingest.tables import CLIPS, RAW_VIDEOS, VIDEO_PROBE
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.mllm.calls import MODEL_CALLS
from hvbench_assets.core.synthesis.steps import REPAIR_STEPS
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.labels import LABEL_TABLES
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, TASK_CANDIDATES, question_content_hash
from hvbench_assets.core.warehouse import Warehouse

_SKIP = {"video_id", "track_id", "backend", "model", "code_version", "materialized_at"}
_OTHER_TABLES = ("synthesis_steps", "review_decisions", "reviewed_questions")


def _jsonable(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


def summarize_row(row: Mapping[str, Any], max_list: int = 8, max_text: int = 300) -> dict[str, Any]:
    """A label row without its provenance columns and bulky arrays (frame-level scores, boxes)."""
    out = {}
    for k, v in row.items():
        if k in _SKIP:
            continue
        if isinstance(v, str) and v[:1] in "[{" and len(v) > 2 * max_text:
            try:
                v = json.loads(v)
            except ValueError:
                pass
        if isinstance(v, (list, tuple)) and len(v) > max_list:
            out[k] = f"[{len(v)} values]"
        elif isinstance(v, str) and len(v) > max_text:
            out[k] = v[:max_text] + "…"
        else:
            out[k] = v
    return out


def _rows(wh: Warehouse, table: str, sql_where: str, params: Sequence[Any], order: str = "") -> list[dict] | None:
    """Rows of an optional table (None when it does not exist); JSON columns come back as strings."""
    if not wh.has_table(table):
        return None
    return wh.query(f'SELECT * FROM "{table}" WHERE {sql_where}{order}', list(params))


def _decode(rows: list[dict] | None, *cols: str) -> list[dict] | None:
    if rows is None:
        return None
    for r in rows:
        for c in cols:
            if isinstance(r.get(c), str):
                try:
                    r[c] = json.loads(r[c])
                except ValueError:
                    pass
    return rows


def _answer_from(abbrev: str | None) -> str:
    info = TASK_BY_ABBREV.get(abbrev or "")
    return info.answer_from if info else f"{abbrev!r} is not a task of the catalog"


def _host_path(stored: str | None) -> str | None:
    path = resolve(stored)
    return str(path) if path is not None else None


def _source(wh: Warehouse, video_id: str) -> dict[str, Any]:
    probe = wh.rows(VIDEO_PROBE, video_id=video_id)
    clip = probe[0] if probe else {}
    out: dict[str, Any] = {"clip": {k: clip.get(k) for k in ("video_id", "path", "duration_s", "fps", "frame_count",
                                                              "width", "height", "has_audio", "sha256")}
                           if clip else {"video_id": video_id, "missing": "no video_probe row"}}
    if clip:  # the file on this host (the table keeps it relative to the data root)
        out["clip"]["path"] = _host_path(clip.get("path"))
    cut = wh.query("SELECT * FROM clips WHERE video_id = ?", [video_id]) if wh.has_table(CLIPS.name) else []
    if cut:
        c = cut[0]
        raw = wh.rows(RAW_VIDEOS, raw_video_id=c["raw_video_id"])
        out["raw"] = {"raw_video_id": c["raw_video_id"], "path": _host_path(raw[0]["path"]) if raw else None,
                      "sha256": raw[0]["sha256"] if raw else None, "clip_index": c["clip_index"],
                      "start_s": c["start_s"], "end_s": c["end_s"], "kept_because": c["reason"]}
    else:
        out["raw"] = None  # the clip was registered directly (no raw video was split for it)
    return out


def _labels(wh: Warehouse, q: Mapping[str, Any], basis_tracks: list[int]) -> list[dict[str, Any]]:
    """Each label row the question names, the row as stored now, and whether it changed since."""
    info = TASK_BY_ABBREV.get(q.get("abbrev") or "")
    decisive = set(info.answer_labels if info else ())  # the catalog's answer sources; the rest only gate
    table_of = {spec.name: spec for spec in LABEL_TABLES.values()}
    out = []
    for ref in q.get("label_rows") or []:
        spec = table_of.get(ref.get("table"))
        where = {"video_id": ref.get("video_id")}
        if ref.get("track_id") is not None:
            where["track_id"] = ref["track_id"]
        now = wh.rows(spec, **where) if spec is not None else []
        if spec is not None and ref.get("track_id") is None and "track_id" in spec.column_names:
            now = [r for r in now if r.get("track_id") is None]
        current = now[0] if now else None
        changed = row_changed(ref, current)
        tid = ref.get("track_id")
        out.append({
            "ref": dict(ref),
            "current": summarize_row(current) if current else None,
            "current_provenance": {k: current.get(k) for k in ("backend", "model", "code_version", "materialized_at")}
            if current else None,
            "changed_since_question": changed,
            "decides_answer": ref.get("table") in decisive and (tid is None or not basis_tracks or tid in basis_tracks),
        })
    return out


def _calls(wh: Warehouse, call_ids: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for cid in call_ids:
        rows = wh.rows(MODEL_CALLS, id=cid)
        if not rows:
            out.append({"call_id": cid, "missing": "no model_calls row"})
            continue
        r = rows[0]
        out.append({"call_id": cid, "model": r["model"], "model_id": r["model_id"], "endpoint": r["endpoint"],
                    "system": r["system"], "prompt": r["prompt"], "text": r["text"], "error": r["error"],
                    "inputs": r["inputs"], "created_at": r["created_at"]})
    return out


def _evaluations(wh: Warehouse, qid: str, task: str) -> list[dict[str, Any]] | None:
    if not wh.has_table(EVAL_RESPONSES.name):
        return None
    runs = {r["run_id"]: r for r in wh.rows(EVAL_RUNS)} if wh.has_table(EVAL_RUNS.name) else {}
    rows = wh.query("SELECT run_id, benchmark, rotation, answer_original, chosen_original, correct, status, method, "
                    "response, call_id, answered_at FROM eval_responses WHERE question_id = ? AND task = ? "
                    "ORDER BY run_id, rotation", [qid, task])
    for r in rows:
        cfg = runs.get(r["run_id"], {}).get("config")
        cfg = json.loads(cfg) if isinstance(cfg, str) else cfg or {}
        parts = r["run_id"].split("__")
        r["model"] = cfg.get("model") or (parts[1] if len(parts) > 2 else r["run_id"])
    return rows


def explain_question(warehouse: Warehouse, question_id: str) -> dict[str, Any]:
    """The whole chain of one question as a JSON-able dict; {"found": False, ...} for an unknown id."""
    wh = warehouse
    qs = wh.rows(QUESTIONS, question_id=question_id)
    if not qs:
        return {"question_id": question_id, "found": False,
                "message": f"no question {question_id!r} in {wh.path} (list them with `hvbench questions`)"}
    q = qs[0]
    vid, task, qid = q["video_id"], q["task"], question_id
    missing: list[str] = []

    def optional(table: str, where: str, params: Sequence[Any], order: str = "", json_cols: Sequence[str] = ()):
        rows = _decode(_rows(wh, table, where, params, order), *json_cols)
        if rows is None:
            missing.append(table)
        return rows

    basis_tracks = answer_tracks(q)
    cands = wh.rows(TASK_CANDIDATES, video_id=vid, task=task)
    labels = _labels(wh, q, basis_tracks)
    answer_opt = next((o for o in q.get("options") or [] if o.get("letter") == q.get("answer")), None)
    annotations = [a for a in (wh.rows(ANNOTATIONS) if q.get("annotation_ids") else [])
                   if a["annotation_id"] in set(q["annotation_ids"])]
    decisions = optional("review_decisions", "question_id = ?", [qid], " ORDER BY created_at", ["shown_order"])
    content_hash = question_content_hash(q)
    if decisions is not None:
        for d in decisions:
            d["applies_to_current_content"] = d.get("content_hash") == content_hash
    flags = _decode(_rows(wh, "review_flags", "question_id = ?", [qid], " ORDER BY flagged_at, benchmark"),
                    "reasons", "answers") or []  # optional: only an evaluation report writes it
    for f in flags:
        done = flag_outcome(f, decisions or [])
        f["outcome"] = ({k: done[k] for k in ("decision_id", "reviewer", "action", "corrected_answer", "reason",
                                              "created_at")} if done else None)
        f["open"] = bool(f["current"] and done is None and f["content_hash"] == content_hash)
    blind = optional(BLIND_ANSWERS.name, "question_id = ?", [qid], " ORDER BY benchmark, model, rotation", ["options"])
    verdicts = optional(LEAKAGE_VERDICTS.name, "question_id = ?", [qid])
    repairs = _decode(_rows(wh, "leakage_repairs", "question_id = ?", [qid], " ORDER BY benchmark, round"), "payload")
    result = {
        "question_id": qid, "found": True,
        "question": {k: q.get(k) for k in ("task", "abbrev", "video_id", "status", "provisional", "question", "options",
                                           "answer", "answer_text", "video_path", "marking", "target_track_ids",
                                           "rule", "rule_version", "rule_params", "seed", "clip_sha256")},
        "content_hash": content_hash,
        "question_provenance": {k: q.get(k) for k in ("backend", "model", "code_version", "materialized_at")},
        "source": _source(wh, vid),
        "selection": ({k: cands[0].get(k) for k in ("status", "rule", "reason", "measured", "target_track_ids")}
                      if cands else None),
        "answer_basis": {"letter": q.get("answer"), "text": q.get("answer_text"),
                         "origin": (answer_opt or {}).get("origin"), "tracks": basis_tracks,
                         "from": _answer_from(q.get("abbrev")),
                         "label_rows": [lr["ref"] | {"current": lr["current"]} for lr in labels if lr["decides_answer"]]},
        "labels": labels,
        "model_calls": _calls(wh, q.get("call_ids") or []),
        "annotations": annotations,
        "synthesis_steps": optional("synthesis_steps", "question_id = ?", [qid], " ORDER BY seq", ["payload"]),
        "pool": optional(QUESTION_POOL.name, "question_id = ?", [qid], "", ["options"]),
        "leakage": None if blind is None and verdicts is None else {"verdicts": verdicts or [], "answers": blind or [],
                                                                          "repairs": repairs or []},
        "review": None if decisions is None else {
            "decisions": decisions, "flags": flags,
            "reviewed": (optional("reviewed_questions", "question_id = ?", [qid], "", ["options", "reviewers",
                                                                                     "decision_ids"]) or [None])[0]},
        "evaluations": _evaluations(wh, qid, task),
        "export": optional(EXPORT_ITEMS.name, "question_id = ?", [qid], "", ["letter_order"]),
    }
    reviewed = (result["review"] or {}).get("reviewed") or {}
    result["evidence"] = _evidence(wh, q, reviewed.get("answer_text") or q.get("answer_text"))
    result["question"]["video_path"] = _host_path(q.get("video_path"))  # the other sections show rows as stored
    if result["evaluations"] is None:
        missing.append(EVAL_RESPONSES.name)
    result["tables_missing"] = sorted(set(missing))
    return _jsonable(result)


def _evidence(wh: Warehouse, q: Mapping[str, Any], answer_text: str | None) -> dict[str, Any]:
    """The evidence the next export writes with this item (evidence.py), from the warehouse as it is now."""
    tables = {r.get("table") for r in q.get("label_rows") or []}
    return build_evidence(q, answer_text, load_clip_facts(wh, q["video_id"], tables))


# -- text ----------------------------------------------------------------------------------------
def _kv(d: Mapping[str, Any] | None, limit: int | None = None) -> str:
    text = ", ".join(f"{k}={_short(v)}" for k, v in (d or {}).items() if v is not None)
    return text if limit is None or len(text) <= limit else text[:limit] + "…"


def _short(v: Any, n: int = 120) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[:n] + "…"


def _block(text: str | None, indent: str = "      ", n: int = 600) -> list[str]:
    if text is None:
        return [f"{indent}(none)"]
    text = text if len(text) <= n else text[:n] + "…"
    return [indent + line for line in text.splitlines() or [""]]


def _mark(reply: Mapping[str, Any]) -> str:
    """right | wrong | unparsed | failed, for a blind answer or an evaluation reply."""
    return "right" if reply["correct"] else ("wrong" if reply["status"] == "parsed" else reply["status"])


def _ref_name(ref: Mapping[str, Any]) -> str:
    track = f" track {ref['track_id']}" if ref.get("track_id") is not None else ""
    return f"{ref.get('label', '?')} {ref.get('table')}{track}"


def _ref_prov(ref: Mapping[str, Any]) -> str:
    return (f"backend={ref.get('backend') or '-'} model={ref.get('model') or '-'} code_version={ref.get('code_version')} "
            f"materialized_at={str(ref.get('materialized_at'))[:19]}")


def assembled_letters(export: Mapping[str, Any], stored_options: Sequence[Mapping[str, Any]]) -> str:
    """The stored option order beside the one exported (letters are balanced when the benchmark is assembled)."""
    order = export.get("letter_order") or []
    stored = [o.get("letter") for o in stored_options]
    if not order:
        return f"answer letter {export.get('answer')} (exported before letters were assembled)"
    moves = ", ".join(f"{new}<-{old}" for new, old in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", order))
    same = "unchanged" if list(order) == stored else f"exported order {moves} (new<-stored)"
    return (f"letters: stored answer {export.get('stored_answer')}, exported answer {export.get('answer')}; "
            f"stored order {','.join(stored)}; {same}")


def _repair_step_line(s: Mapping[str, Any]) -> str:
    """A repair round's step (synthesis_steps written by the leakage step) in one line."""
    p = s.get("payload") or {}
    head = f"  {s.get('seq')}. {s['step']} ({p.get('benchmark')}, round {p.get('round')})"
    if s["step"] == "blind":
        picks = "; ".join(f"{_short(o, 40)}: {n}" for o, n in (p.get("picks") or {}).items())
        return (f"{head} [{s.get('status')}]: {p.get('n_correct')}/{p.get('n_answers')} right without video "
                f"(p={p.get('p_value', 1):.3g}) by {', '.join(p.get('models') or []) or '-'}; picks {picks}")
    if s["step"] == "repair":
        call = f" call {s['call_id'][:12]}" if s.get("call_id") else ""
        after = p.get("after") if p.get("after") is not None else f"none ({p.get('error')})"
        return (f"{head}: {s.get('model') or '-'}{call} [{s.get('status')}]: wrong options {_short(p.get('before'), 200)}"
                f" -> {_short(after, 300)}; feedback: {_short((p.get('feedback') or '').strip(), 200)}")
    problems = p.get("problems") or []
    return f"{head} [{s.get('status')}]" + (f": {'; '.join(map(str, problems))}" if problems else ": options pass")


def _flag_lines(f: Mapping[str, Any], content_hash: str) -> list[str]:
    """An evaluation's flag (core/curation/flags.py): why, what the models chose, and what review made of it."""
    out = [f"  flagged by the evaluation of {f['benchmark']} at {str(f['flagged_at'])[:19]}: "
           f"{'; '.join(f['reasons'] or [])} ({f.get('detail') or '-'})"]
    if f.get("answers"):
        out.append("    models chose: " + "; ".join(f"{a['model']} {_short(a['text'], 60)!r} ({'right' if a['right'] else 'wrong'})"
                                                   for a in f["answers"]))
    done = f.get("outcome")
    if done:
        what = done["action"] + (f" -> {done['corrected_answer']}" if done.get("corrected_answer") else "") + \
            (f" ({done['reason']})" if done.get("reason") else "")
        out.append(f"    review after the flag: {done['reviewer']} {what} at {str(done['created_at'])[:19]}")
    elif f["content_hash"] != content_hash:
        out.append("    raised on another version of the question: does not apply")
    elif not f.get("current"):
        out.append("    no longer raised by the benchmark's latest report, never reviewed")
    else:
        out.append("    open: waiting in the review queue (hvbench review)")
    return out


def format_explanation(data: Mapping[str, Any]) -> str:
    """The dict of `explain_question` as plain text, one section per link of the chain."""
    if not data.get("found"):
        return data.get("message") or f"no question {data.get('question_id')!r}"
    q, lines = data["question"], []
    add = lines.append
    add(f"Question {data['question_id']}  [{q['abbrev']} {q['task']}]  clip {q['video_id']}  status {q['status']}"
        + ("  (provisional)" if q.get("provisional") else ""))
    add(f"  {q.get('question') or '(no question text: waiting for an annotation)'}")
    for o in q.get("options") or []:
        add(f"    {o['letter']}. {o['text']}  [{o.get('origin')}]" + ("   <- answer" if o["letter"] == q["answer"] else ""))
    add(f"  question video: {q.get('video_path')}   marking: {_short(q.get('marking'))}")
    qp = data.get("question_provenance") or {}
    add(f"  built by code_version={qp.get('code_version')} at {str(qp.get('materialized_at'))[:19]}; "
        f"content hash {data['content_hash']}")

    add("\n1. Source")
    src = data["source"]
    raw = src.get("raw")
    if raw:
        add(f"  raw file {raw['path']} ({raw['raw_video_id']}), {raw['start_s']:.2f}-{raw['end_s']:.2f} s "
            f"(clip #{raw['clip_index']}: {raw['kept_because']})")
        add(f"  every run that touched it: `hvbench runs --file {raw['raw_video_id']}` (prints the Runs page filter)")
    else:
        add("  raw file: none recorded (the clip was registered directly, not cut from a raw video)")
    add(f"  clip: {_kv(src['clip'])}")

    add("\n2. Selection")
    sel = data.get("selection")
    if sel:
        add(f"  verdict {sel['status']} by rule {sel['rule']}: {sel.get('reason') or ''}")
        add(f"  measured: {_kv(sel.get('measured'))}")
    add(f"  rule {q.get('rule')} version {q.get('rule_version')}; params: "
        f"{_short((q.get('rule_params') or {}).get('params'), 300)}")
    build = (q.get("rule_params") or {}).get("build")
    if build:
        add(f"  build details: {_short(build, 300)}")

    add("\n3. Where the answer comes from")
    basis = data["answer_basis"]
    add(f"  answer {basis['letter']} = {basis['text']!r} (origin {basis['origin']}); rule: {basis['from']}")
    if basis["tracks"]:
        add(f"  answer's track(s): {', '.join(map(str, basis['tracks']))}")
    for ref in basis["label_rows"]:
        add(f"  >> {_ref_name(ref)}: {_kv(ref.get('current'))}")
        add(f"     {_ref_prov(ref)}")

    add("\n4. Label rows read")
    for lr in data["labels"]:
        ref = lr["ref"]
        flag = "  <- decides the answer" if lr["decides_answer"] else ""
        add(f"  {_ref_name(ref)}{flag}")
        add(f"     {_ref_prov(ref)}")
        if lr["current"] is None:
            add("     row no longer exists")
        else:
            add(f"     now: {_kv(lr['current'], None if lr['decides_answer'] else 360)}")
            if lr["changed_since_question"]:
                add(f"     CHANGED since the question was built: now {_kv(lr['current_provenance'])}")

    ev = data.get("evidence") or {}
    add("  evidence (as the next export writes it): "
        + (f"span {ev['span']} {ev['span_s'][0]:.2f}-{ev['span_s'][1]:.2f} s" if ev.get("span_s") else "no span")
        + (f"; frame {ev['frame']['index']} at {ev['frame']['t_s']:.2f} s" if ev.get("frame") else "; no frame"))
    for person in ev.get("people") or []:
        add(f"    Person {person['person']} (track {', '.join(map(str, person['track_ids']))})"
            + (" <- answer" if person.get("answer") else "")
            + f": face {person.get('face')}, body {person.get('body')}"
            + (" (x, y, w, h as frame fractions)" if "fractions" in str(ev.get("box_units")) else " (pixels)"))
    if ev.get("missing"):
        add(f"    lacks: {ev['missing']}")

    add("\n5. Model calls")
    if not data["model_calls"]:
        add("  none (built from labels only)")
    for c in data["model_calls"]:
        if c.get("missing"):
            add(f"  {c['call_id'][:16]}: {c['missing']}")
            continue
        add(f"  {c['call_id'][:16]} {c['model']} ({c['model_id']} at {c['endpoint']}) {str(c['created_at'])[:19]}")
        if c.get("system"):
            add("    system:")
            lines.extend(_block(c["system"]))
        add("    prompt:")
        lines.extend(_block(c["prompt"]))
        add("    reply:" if not c.get("error") else f"    error: {c['error']}")
        if not c.get("error"):
            lines.extend(_block(c["text"]))
    for a in data.get("annotations") or []:
        add(f"  annotation {a['annotation_id']} by {a['annotator']} at {str(a['created_at'])[:19]}: {_short(a['value'])}")

    add("\n6. Synthesis (answers, ranking, perturbation; then the leakage step's repair rounds)")
    steps = data.get("synthesis_steps")
    if steps is None:
        add("  no synthesis_steps table")
    elif not steps:
        add("  no synthesis steps for this question")
    for s in steps or []:
        if s.get("step") in REPAIR_STEPS:
            add(_repair_step_line(s))
            continue
        call = f" call {s['call_id'][:12]}" if s.get("call_id") else ""
        weight = f" weight {s['weight']:g}" if s.get("weight") is not None else ""
        status = f" [{s['status']}]" if s.get("status") not in (None, "ok") else ""
        add(f"  {s.get('seq')}. {s.get('step')}: {s.get('model') or '-'}{weight}{call}{status}: {_short(s.get('payload'), 300)}")

    add("\n7. Pool and leakage")
    pool = data.get("pool")
    for p in pool or []:
        add(f"  pool {p['benchmark']}: {'selected' if p['selected'] else 'left out: ' + str(p['reason'])}"
            + (f" (stratum {p['stratum']})" if p.get("stratum") else ""))
    if pool is None:
        add("  no question_pool table")
    leak = data.get("leakage")
    if leak is None:
        add("  no blind answers table")
    else:
        for v in leak["verdicts"]:
            if not v["n_answers"]:
                add(f"  leakage {v['benchmark']}: {v['reason']}")
                continue
            add(f"  leakage {v['benchmark']}: {v['n_correct']}/{v['n_answers']} right without video "
                f"(chance {v['chance']:.2f}, p={v['p_value']:.3g}) -> {'REMOVED: ' + v['reason'] if v['removed'] else 'kept'}")
        for a in leak["answers"]:
            add(f"    {a['model']}{' round ' + str(a['round']) if a.get('round') else ''} rotation {a['rotation']}: chose {a['chosen'] or '-'} (answer {a['answer']}) "
                f"{_mark(a)}: {_short(a['response'], 80)}")

        in_steps = {(s.get("payload") or {}).get("benchmark") for s in steps or [] if s.get("step") in REPAIR_STEPS}
        for r in leak.get("repairs") or []:
            if r["benchmark"] in in_steps:  # shown with the synthesis steps (6.)
                continue
            call = f" call {r['call_id'][:12]}" if r.get("call_id") else ""
            add(f"    repair round {r['round']} {r['step']}{call} [{r['status']}]: {_short(r.get('payload'), 300)}")

    add("\n8. Review")
    review = data.get("review")
    if review is None:
        add("  no review_decisions table")
    else:
        if not review["decisions"]:
            add("  no review decisions")
        for d in review["decisions"]:
            stale = "" if d.get("applies_to_current_content") else "  (made on other content: does not apply)"
            add(f"  {str(d.get('created_at'))[:19]} {d.get('reviewer')}: blind choice {d.get('blind_choice') or '-'}, "
                f"{d.get('action')}" + (f" -> {d.get('corrected_answer')}" if d.get("corrected_answer") else "")
                + (f", reason {d.get('reason')}: {d.get('reason_text') or ''}" if d.get("reason") else "") + stale)
        rv = review.get("reviewed")
        if rv:
            add(f"  state now: {rv.get('state')} (answer {rv.get('answer')})")
        for f in review.get("flags") or []:
            lines.extend(_flag_lines(f, data["content_hash"]))

    add("\n9. Export and evaluations")
    for e in data.get("export") or []:
        add(f"  exported in {e['benchmark']}: {e['folder']}/{e['jsonl']} (video {e['video']}; review {e['review_state']}; "
            f"leakage {e['leakage']})")
        add("  " + assembled_letters(e, q.get("options") or []))
    evals = data.get("evaluations")
    if evals is None:
        add("  no evaluation tables")
    elif not evals:
        add("  not evaluated yet")
    for e in evals or []:
        add(f"  {e['model']} on {e['benchmark']} (rotation {e['rotation']}): chose {e['chosen_original'] or '-'}, "
            f"{_mark(e)}; reply {_short(e['response'], 80)}")
    if data.get("tables_missing"):
        add(f"\n(tables not present yet: {', '.join(data['tables_missing'])})")
    return "\n".join(lines)
