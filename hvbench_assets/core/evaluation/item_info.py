"""What the report's statistics need to know about each evaluated item beyond the replies: its clip (the cluster
of the bootstrap), its clip and target person (the consistency groups), the labels of its target person (the
demographic slices) and its texts (the text-bias score).

The clip and target come from the warehouse `questions` table when the benchmark is our export (its Question_id
is the warehouse question id); the target's L3 gender / age class from `demographics` (one target track, status
ok) and the clip's L10 voice class from `voice_demographics` (status ok). Without them the clip is the item's
`Video` file from the benchmark folder, and without that the item stands alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.audio.tables import VOICE_DEMOGRAPHICS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.vision.tables import DEMOGRAPHICS
from hvbench_assets.core.warehouse import Warehouse

Key = tuple[str, str]  # (task, question_id)


@dataclass
class ItemInfo:
    info: dict[Key, dict] = field(default_factory=dict)  # cluster and slice labels
    texts: list[dict] = field(default_factory=list)  # text-bias inputs (core/scoring/textbias.py)
    clustering: str = "every item its own cluster (no clip ids known)"


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def _warehouse_targets(wh: Warehouse, question_ids: set[str]) -> dict[str, dict]:
    """question_id -> cluster (video_id) and the target's labels, for questions the warehouse knows."""
    if not wh.has_table(QUESTIONS.name):
        return {}
    questions = [q for q in wh.rows(QUESTIONS) if q["question_id"] in question_ids]
    if not questions:
        return {}
    faces = {}
    if wh.has_table(DEMOGRAPHICS.name):
        faces = {(r["video_id"], r["track_id"]): r for r in wh.rows(DEMOGRAPHICS) if r["status"] == "ok"}
    voices = {}
    if wh.has_table(VOICE_DEMOGRAPHICS.name):
        voices = {r["video_id"]: r for r in wh.rows(VOICE_DEMOGRAPHICS) if r["status"] == "ok"}
    out = {}
    for q in questions:
        tracks = _json(q.get("target_track_ids")) or []
        face = faces.get((q["video_id"], tracks[0])) if len(tracks) == 1 else None
        voice = voices.get(q["video_id"])
        out[q["question_id"]] = {
            "cluster": q["video_id"],
            # items about the same clip and target person: the consistency groups (core/scoring/consistency.py)
            "person_group": f"{q['video_id']} tracks {sorted(tracks)}" if tracks else None,
            "L3 gender": face.get("gender") if face else None,
            "L3 age class": face.get("age_class") if face else None,
            "L10 voice class": voice.get("voice_class") if voice else None,
        }
    return out


def collect(wh: Warehouse, benchmark_root: str | Path | None, keys: Iterable[Key]) -> ItemInfo:
    """Clusters, slice labels and texts of the evaluated items (`keys`)."""
    keys = set(keys)
    out = ItemInfo()
    items = {}
    if benchmark_root and Path(benchmark_root).exists():
        from hvbench_assets.core.benchmark.layout import load_benchmark

        items = {(i.task, i.question_id): i for i in load_benchmark(benchmark_root).items
                 if (i.task, i.question_id) in keys}
    known = _warehouse_targets(wh, {q for _, q in keys})
    from_warehouse = from_folder = 0
    for key in keys:
        item = items.get(key)
        extra = dict(known.get(key[1], {}))
        if extra:
            from_warehouse += 1
        elif item is not None:
            extra["cluster"] = f"video:{Path(item.video).stem}"
            from_folder += 1
        if extra:
            out.info[key] = extra
        if item is not None:
            out.texts.append({"task": item.task, "question_id": item.question_id,
                              "cluster": extra.get("cluster") or f"{item.task}/{item.question_id}",
                              "question": item.question, "options": [o.text for o in item.options],
                              "answer_index": item.letters.index(item.answer)})
    if from_warehouse or from_folder:
        parts = [f"{from_warehouse} item(s) by warehouse clip"] if from_warehouse else []
        parts += [f"{from_folder} by Video file"] if from_folder else []
        rest = len(keys) - from_warehouse - from_folder
        out.clustering = "clusters: " + ", ".join(parts) + (f", {rest} alone" if rest else "")
    return out
