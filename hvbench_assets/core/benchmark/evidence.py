"""Evidence with every exported item: the stretch of the clip and the person boxes its truth rests on, read from the
label rows behind `hvbench explain` (the question's `label_rows`, L1 boxes, L7 runs, L8 timing, the rule's own
numbers), so a user can check an item's grounding, not only its letter.

What a family's items carry is the catalog's `evidence` (core/tasks/catalog.py): a span kind and whose boxes. An item
whose truth has no span or names no person carries what it has and says what it lacks (`missing`).

    found = item_evidence(warehouse, items)    # {question_id: evidence} for the export's items (pool rows)
    evidence_table_markdown()                  # what each family carries, the table of docs/evaluation.md

Times are seconds of the clip, which is the question video's timeline (a question video is the whole clip with
boxes drawn or its sound reversed). Boxes are the stored L1 face and body boxes at one frame, named by its index
and time, as [x, y, w, h] fractions of the frame's width and height from the top-left corner (`size_px` turns
them into pixels).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from hvbench_assets.core.benchmark.answer_basis import answer_tracks, row_changed
from hvbench_assets.core.benchmark.layout import EVIDENCE_FIELD
from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS
from hvbench_assets.core.tasks.labels import LABEL_TABLES
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.vision.tables import Track, TrackBox, load_tracks, number_tracks
from hvbench_assets.core.warehouse import Warehouse

EVIDENCE_VERSION = "evidence-v1"
BOX_UNITS = "[x, y, w, h] as fractions of the frame's width and height, origin top-left (times size_px: pixels)"
PIXEL_UNITS = "[x, y, w, h] in pixels of the clip, origin top-left (the clip's size is unknown)"

SPAN_WORDS = {
    "presence": "the answer's person on screen: first to last frame of its L1 tracks (`human_tracks`)",
    "speaking": "the answer's person speaking: the longest positive run of its L7 scores (`speaker_scores`)",
    "action_time": "the second the annotated action starts (`annotations`, in the rule's build details; 0 when it "
                   "is ongoing from the start): a point, both ends equal",
    "answer_range": "the right option's second range (the target's L1 presence in whole seconds, the rule's "
                    "`truth_range`)",
    "aligned": "from the cut (the rule's seeded `cut_s`) to the clip's end: where sound and picture run together",
    "speech": "first to last timed segment of the transcript (`transcript`); the whole clip when it has no timing",
    "clip": "the whole clip",
}
PEOPLE_WORDS = {
    "answer": "the answer's person (the target), face and body box",
    "offered": "every numbered person of the options with the number drawn on the video, the answer's marked",
    "none": "nobody (the truth names no person)",
}
# the label table a span is read from (the others come from the question's rule or annotations)
SPAN_TABLE = {"presence": "human_tracks", "speaking": "speaker_scores", "answer_range": "human_tracks",
              "speech": "transcript"}


@dataclass
class Clip:
    """What the evidence of one clip's items reads: its size and length, L1 tracks with boxes, L7 rows, the
    transcript, and the current rows of the label tables the questions name (to say whether they changed)."""
    video_id: str
    size: tuple[int, int] | None
    duration_s: float | None
    tracks: list[Track]
    speakers: dict[int, dict[str, Any]] = field(default_factory=dict)
    transcript: dict[str, Any] | None = None
    current: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # label table -> its rows now

    @cached_property
    def numbers(self) -> dict[int, int]:
        """The clip's person numbers (as on human_tracks' key frame)."""
        return number_tracks(self.tracks)


@dataclass(frozen=True)
class _Person:
    number: int | None
    tracks: tuple[int, ...]
    answer: bool


def _r(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(float(x), digits)


def _build(q: Mapping[str, Any]) -> Mapping[str, Any]:
    return (q.get("rule_params") or {}).get("build") or {}


def _span(kind: str, q: Mapping[str, Any], answer: set[int], clip: Clip, missing: list[str]) -> list[float] | None:
    """[start, end] seconds of the clip the truth rests on, or None with the reason in `missing`."""
    by_id = {t.track_id: t for t in clip.tracks}
    if kind in ("presence", "speaking"):
        tracks = [by_id[t] for t in sorted(answer) if t in by_id]
        if not tracks:
            missing.append(f"span: the answer's L1 track(s) {sorted(answer)} are not in human_tracks now")
            return None
        if kind == "presence":
            return [min(t.first_s for t in tracks), max(t.last_s for t in tracks)]
        runs = [(row["longest_run"], t, row) for t in tracks
                if (row := clip.speakers.get(t.track_id)) and (row.get("longest_run") or 0) > 0]
        if not runs:
            missing.append("span: no L7 speaking run on the answer's track(s)")
            return None
        _, track, row = max(runs, key=lambda r: r[0])
        first = row["first_frame"] + row["longest_run_start"]
        return [_time(track, first, row["fps"]), _time(track, first + row["longest_run"] - 1, row["fps"])]
    build = _build(q)
    if kind == "action_time":
        if build.get("ongoing"):
            return [0.0, 0.0]
        if build.get("start_s") is None:
            missing.append("span: the rule stored no action start (an annotation made before starts were kept?)")
            return None
        return [float(build["start_s"])] * 2
    if kind == "answer_range":
        if not build.get("truth_range"):
            missing.append("span: the rule stored no truth_range")
            return None
        return [float(v) for v in build["truth_range"]]
    if kind == "aligned" and build.get("cut_s") is not None and clip.duration_s:
        return [float(build["cut_s"]), clip.duration_s]
    if kind == "speech":
        timed = [s for s in (clip.transcript or {}).get("segments") or []
                 if s.get("start_s") is not None and s.get("end_s") is not None]
        if timed:
            return [min(s["start_s"] for s in timed), max(s["end_s"] for s in timed)]
        missing.append("span: the transcript has no timed segments, so the span is the whole clip")
    if not clip.duration_s:
        missing.append("span: the clip has no video_probe duration")
        return None
    if kind == "aligned":
        missing.append("span: the rule stored no cut_s, so the span is the whole clip")
    return [0.0, clip.duration_s]


def _time(track: Track, frame: int, fps: float) -> float:
    box = track.box_at(frame)
    return box.t if box is not None else frame / fps


def _people(kind: str, q: Mapping[str, Any], answer: set[int], clip: Clip) -> list[_Person]:
    if kind == "answer":
        tracks = tuple(sorted(answer))
        numbers = [clip.numbers[t] for t in tracks if t in clip.numbers]
        return [_Person(min(numbers) if numbers else None, tracks, True)] if tracks else []
    if kind == "offered":  # the numbers drawn on the question video, one person per number
        by_number: dict[int, list[int]] = {}
        for t, n in ((q.get("marking") or {}).get("numbers") or {}).items():
            by_number.setdefault(int(n), []).append(int(t))
        return [_Person(n, tuple(sorted(ts)), bool(answer & set(ts))) for n, ts in sorted(by_number.items())]
    return []


def _frame(people: Sequence[_Person], span: Sequence[float] | None, clip: Clip) -> dict[int, dict[int, TrackBox]]:
    """{frame: {track: box}} of the one frame to show: inside the span (within half a frame), showing the answer's
    person, then the most people, then nearest the span's middle (earliest on a tie). Empty without boxes."""
    wanted = {t for p in people for t in p.tracks}
    boxes: dict[int, dict[int, TrackBox]] = {}
    for track in clip.tracks:
        if track.track_id in wanted:
            for b in track.boxes:
                boxes.setdefault(b.frame, {})[track.track_id] = b
    if not boxes:
        return {}
    times = {f: next(iter(on.values())).t for f, on in boxes.items()}
    slack = 0.5 / max((t.fps for t in clip.tracks if t.fps), default=25.0)
    lo, hi = span if span else (min(times.values()), max(times.values()))
    mid = (lo + hi) / 2

    def rank(frame: int) -> tuple:
        shown = [p for p in people if any(t in boxes[frame] for t in p.tracks)]
        return (lo - slack <= times[frame] <= hi + slack, any(p.answer for p in shown), len(shown),
                -abs(times[frame] - mid), -frame)

    best = max(boxes, key=rank)
    return {best: boxes[best]}


def _box(box: Sequence[float], size: tuple[int, int] | None) -> list[float]:
    x1, y1, x2, y2 = box
    if size is None:
        return [round(x1, 1), round(y1, 1), round(x2 - x1, 1), round(y2 - y1, 1)]
    w, h = size
    return [round(x1 / w, 4), round(y1 / h, 4), round((x2 - x1) / w, 4), round((y2 - y1) / h, 4)]


def _label_rows(q: Mapping[str, Any], tables: set[str], decisive: set[str], tracks: set[int], answer: set[int],
                clip: Clip) -> list[dict[str, Any]]:
    """The question's label rows the evidence and the answer read, each named by asset, clip and track, with the
    version it had when the question was built and whether it changed since."""
    out = []
    for ref in q.get("label_rows") or []:
        table, tid = ref.get("table"), ref.get("track_id")
        if table not in tables or (tid is not None and tid not in tracks):
            continue
        now = next((r for r in clip.current.get(table, []) if r.get("track_id") == tid), None)
        out.append({"asset": table, "label": ref.get("label"), "video_id": ref.get("video_id"), "track_id": tid,
                    "code_version": ref.get("code_version"), "materialized_at": ref.get("materialized_at"),
                    "decides_answer": table in decisive and (tid is None or not answer or tid in answer),
                    "changed_since_question": row_changed(ref, now)})
    return out


def build_evidence(q: Mapping[str, Any], answer_text: str | None, clip: Clip) -> dict[str, Any]:
    """The evidence of one question (its `questions` row) whose exported answer is `answer_text` (after review)."""
    info = TASK_BY_ABBREV.get(q.get("abbrev") or "")
    out: dict[str, Any] = {"version": EVIDENCE_VERSION, "video_id": q.get("video_id")}
    if info is None:
        return {**out, "missing": f"{q.get('abbrev')!r} is not a task of the catalog"}
    answer = set(answer_tracks({**q, "answer_text": answer_text}))
    missing: list[str] = []
    span = _span(info.evidence.span, q, answer, clip, missing)
    people = _people(info.evidence.people, q, answer, clip)
    shown = _frame(people, span, clip)
    out |= {"rests_on": info.answer_from, "span": info.evidence.span,
            "span_s": [_r(v) for v in span] if span else None}
    if shown:
        (frame, boxes), = shown.items()
        out["frame"] = {"index": frame, "t_s": _r(next(iter(boxes.values())).t, 3),
                        "size_px": list(clip.size) if clip.size else None}
        out["box_units"] = BOX_UNITS if clip.size else PIXEL_UNITS
        out["people"] = []
        for p in people:
            box = next((boxes[t] for t in p.tracks if t in boxes), None)
            out["people"].append({"person": p.number, "track_ids": list(p.tracks), "answer": p.answer,
                                  "face": _box(box.face, clip.size) if box else None,
                                  "body": _box(box.body, clip.size) if box else None})
    elif info.evidence.people == "none":
        out["people"] = []
        missing.append("people: " + PEOPLE_WORDS["none"])
    else:
        out["people"] = []
        missing.append(f"people: no stored L1 box of track(s) {sorted({t for p in people for t in p.tracks} | answer)}")
    tracks = {t for p in people for t in p.tracks} | answer
    tables = set(info.answer_labels) | ({"human_tracks"} if people else set())
    tables |= {SPAN_TABLE[info.evidence.span]} if info.evidence.span in SPAN_TABLE else set()
    out["label_rows"] = _label_rows(q, tables, set(info.answer_labels), tracks, answer, clip)
    if q.get("annotation_ids"):
        out["annotation_ids"] = list(q["annotation_ids"])
    if missing:
        out["missing"] = "; ".join(missing)
    return out


def load_clip_facts(wh: Warehouse, video_id: str, tables: Iterable[str] = ()) -> Clip:
    """A clip's facts for `build_evidence`, with the current rows of label `tables`."""
    probe = (wh.rows(VIDEO_PROBE, video_id=video_id) or [{}])[0]
    size = (int(probe["width"]), int(probe["height"])) if probe.get("width") and probe.get("height") else None
    speakers = {r["track_id"]: r for r in wh.rows(SPEAKER_SCORES, video_id=video_id) if r.get("track_id") is not None}
    transcript = (wh.rows(LABEL_TABLES["transcript"], video_id=video_id) or [None])[0]
    current = {t: wh.rows(LABEL_TABLES[t], video_id=video_id) for t in tables if t in LABEL_TABLES}
    return Clip(video_id, size, probe.get("duration_s"), load_tracks(wh, video_id), speakers, transcript, current)


def item_evidence(wh: Warehouse, items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """question_id -> evidence for export items (question_id and the exported answer_text), one read per clip."""
    ids = {i["question_id"] for i in items}
    with wh.batch():
        questions = {q["question_id"]: q for q in wh.rows(QUESTIONS) if q["question_id"] in ids}
        clips: dict[str, Clip] = {}
        out = {}
        for item in items:
            q = questions.get(item["question_id"])
            if q is None:
                out[item["question_id"]] = {"version": EVIDENCE_VERSION, "missing": "no questions row"}
                continue
            vid = q["video_id"]
            if vid not in clips:
                tables = {r.get("table") for other in questions.values() if other["video_id"] == vid
                          for r in other.get("label_rows") or []}
                clips[vid] = load_clip_facts(wh, vid, tables)
            out[item["question_id"]] = build_evidence(q, item.get("answer_text"), clips[vid])
    return out


def evidence_table_markdown() -> str:
    """Per task family: the span and the people its items' evidence carries (docs/evaluation.md holds this)."""
    lines = ["| task | span (`span`, `span_s`) | people with boxes (`people`) | the truth rests on (`rests_on`) |",
             "|---|---|---|---|"]
    for t in TASKS:
        ev = t.evidence
        lines.append(f"| {t.abbrev} | `{ev.span}`: {SPAN_WORDS[ev.span]} | `{ev.people}`: {PEOPLE_WORDS[ev.people]} "
                     f"| {t.answer_from} |")
    return "\n".join(lines)


def evidence_summary(found: Mapping[str, Mapping[str, Any]], task_of: Mapping[str, str]) -> dict[str, Any]:
    """The manifest's `evidence` section: what the field holds, and per task how many items have a span, boxes
    and label rows (`task_of`: question_id -> task of the items exported)."""
    per_task: dict[str, dict[str, int]] = {}
    for qid, task in task_of.items():
        ev = found.get(qid) or {}
        c = per_task.setdefault(task, {"items": 0, "span": 0, "boxes": 0, "label_rows": 0})
        c["items"] += 1
        c["span"] += ev.get("span_s") is not None
        c["boxes"] += any(p.get("face") for p in ev.get("people") or [])
        c["label_rows"] += bool(ev.get("label_rows"))
    return {"version": EVIDENCE_VERSION, "field": EVIDENCE_FIELD, "box_units": BOX_UNITS,
            "times": "seconds of the clip, the question video's timeline", "per_task": per_task}


if __name__ == "__main__":
    print(evidence_table_markdown())
