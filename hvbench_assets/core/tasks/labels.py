"""What a task rule reads about one clip: the stored label rows, and where each row came from.

`load_labels` reads exactly the labels a task declares. A label with no rows for the clip means it was
never materialized: `LabelsMissing` names it, and the task fails that partition. Every row read is
recorded (`provenance`) so a question can say which label rows it was built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hvbench_assets.core.audio.tables import AUDIO_TAGS, TRANSCRIPT, VOICE_DEMOGRAPHICS
from hvbench_assets.core.ingest.tables import ClipInfo, ClipNotFound, load_clip
from hvbench_assets.core.mllm.descriptions import APPEARANCE_TABLE, FACIAL_DESCRIPTION_TABLE
from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.vision.tables import (
    DEMOGRAPHICS,
    HUMAN_TRACKS,
    HUMAN_VERDICTS,
    PERSON_COUNT,
    Track,
    load_tracks,
)
from hvbench_assets.core.warehouse import TableSpec, Warehouse

# label asset -> its table (the asset key and the table name are the same words)
LABEL_TABLES: dict[str, TableSpec] = {
    "human_tracks": HUMAN_TRACKS,
    "human_verdicts": HUMAN_VERDICTS,
    "person_count": PERSON_COUNT,
    "demographics": DEMOGRAPHICS,
    "appearance": APPEARANCE_TABLE,
    "facial_description": FACIAL_DESCRIPTION_TABLE,
    "audio_tags": AUDIO_TAGS,
    "speaker_scores": SPEAKER_SCORES,
    "transcript": TRANSCRIPT,
    "voice_demographics": VOICE_DEMOGRAPHICS,
}
PAPER_LABEL = {"human_tracks": "L1", "human_verdicts": "L1", "person_count": "L2", "demographics": "L3",
               "appearance": "L4", "facial_description": "L5", "audio_tags": "L6", "speaker_scores": "L7",
               "transcript": "L8", "voice_demographics": "L10"}


class LabelsMissing(LookupError):
    """A label the task reads has no rows for the clip (not materialized yet)."""


@dataclass
class ClipLabels:
    clip: ClipInfo
    rows: dict[str, list[dict[str, Any]]]  # label -> rows of this clip
    tracks: list[Track] = field(default_factory=list)  # L1 tracks with boxes (status ok), when L1 was read

    @property
    def video_id(self) -> str:
        return self.clip.video_id

    def one(self, label: str) -> dict[str, Any] | None:
        rows = self.rows.get(label) or []
        return rows[0] if rows else None

    def by_track(self, label: str) -> dict[int, dict[str, Any]]:
        return {r["track_id"]: r for r in self.rows.get(label) or [] if r.get("track_id") is not None}

    @property
    def frame_count(self) -> int:
        """Frames of the clip as L1 decoded them (the denominator of presence), else the probe's."""
        l1 = self.one("human_tracks")
        return int((l1 or {}).get("clip_frames") or self.clip.frame_count or 0)

    def provenance(self, labels: Iterable[str], track_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """The rows of `labels` a question used (only the target tracks' rows of per-track labels)."""
        wanted = set(track_ids) if track_ids is not None else None
        out = []
        for label in labels:
            for r in self.rows.get(label) or []:
                tid = r.get("track_id")
                if wanted is not None and tid is not None and tid not in wanted:
                    continue
                out.append(row_ref(label, r))
        return out


def row_ref(label: str, row: Mapping[str, Any]) -> dict[str, Any]:
    ref = {"table": LABEL_TABLES[label].name, "label": PAPER_LABEL.get(label, label), "video_id": row.get("video_id")}
    if "track_id" in row:
        ref["track_id"] = row.get("track_id")
    for k in ("status", "backend", "model", "code_version", "materialized_at", "call_id"):
        if row.get(k) is not None:
            ref[k] = str(row[k]) if k == "materialized_at" else row[k]
    return ref


def load_labels(warehouse: Warehouse, video_id: str, labels: Iterable[str]) -> ClipLabels:
    """The clip (probe) and the rows of `labels`. Raises LabelsMissing naming every absent label."""
    with warehouse.batch():  # one opening of the file for all these reads
        try:
            clip = load_clip(warehouse, video_id)
        except ClipNotFound as exc:
            raise LabelsMissing(str(exc)) from exc
        rows, missing = {}, []
        for label in labels:
            rows[label] = warehouse.rows(LABEL_TABLES[label], video_id=video_id, order_by=_order(LABEL_TABLES[label]))
            if not rows[label]:
                missing.append(f"{label} ({PAPER_LABEL.get(label, '')})")
        if missing:
            raise LabelsMissing(f"clip {video_id!r} has no rows of {', '.join(missing)}: materialize "
                                f"{'it' if len(missing) == 1 else 'them'} for this clip first")
        tracks = load_tracks(warehouse, video_id) if "human_tracks" in rows else []
    return ClipLabels(clip=clip, rows=rows, tracks=tracks)


def _order(spec: TableSpec) -> str | None:
    return "track_id" if "track_id" in spec.column_names else None
