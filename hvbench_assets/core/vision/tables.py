"""L1 human tracks: the warehouse tables other labels read, and `load_tracks` to read them back.

Contract (other labels depend on it):
- `human_tracks`: one row per track of a clip. `track_id` is 0..n-1 ordered by first appearance (ties:
  left to right). A clip without faces has ONE row with track_id NULL and status `no_faces`.
- `human_track_boxes`: one row per (track, source frame) from the track's first to last frame. Boxes are
  source pixel coordinates (x1, y1, x2, y2). `face_source` is `detected` or `interpolated`;
  `body_source` is `detected` (a person box matched to the face on that frame), `filled` (from the
  neighbouring matched boxes) or `estimated` (from face geometry: no person box matched the face yet, or
  no person detector runs). People without a visible face get no track, as on the full profile;
  `faceless_bodies` counts them per clip.
- Crop clips (`face_clip_path`, `body_clip_path`): mp4 at the clip's real fps holding every source frame
  from first_frame to last_frame (crop frame i = source frame first_frame + i), fixed size, with the
  matching audio segment when the clip has audio. Written in the tracking decode pass; the body-crop clip
  only when the run also describes appearance (L4, the one reader of body clips: they are 2/3 of the
  crop encoding), otherwise `body_clip_path` is null and L4 cuts the clip itself when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.warehouse import TableSpec, Warehouse

HUMAN_TRACKS = TableSpec(
    "human_tracks",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),
        ("status", "VARCHAR"),  # ok | no_faces
        ("reason", "VARCHAR"),
        ("first_frame", "INTEGER"),
        ("last_frame", "INTEGER"),
        ("first_s", "DOUBLE"),
        ("last_s", "DOUBLE"),  # time of the last frame's start
        ("n_frames", "INTEGER"),  # last_frame - first_frame + 1
        ("n_detections", "INTEGER"),  # frames where the detector found this face
        ("n_rescued", "INTEGER"),  # of those, found only by the second-look (rescue) passes
        ("coverage", "DOUBLE"),  # n_frames / frames of the clip
        ("face_size_median", "DOUBLE"),  # median of max(face w, face h), source pixels
        ("score_mean", "DOUBLE"),  # mean detector score over detected frames
        ("body_source", "VARCHAR"),  # detected (most boxes detected or filled between detections) | estimated
        ("face_clip_path", "VARCHAR"),
        ("body_clip_path", "VARCHAR"),
        ("face_clip_size", "JSON"),  # [w, h] of the face-crop clip
        ("body_clip_size", "JSON"),  # [w, h] of the body-crop clip
        ("fps", "DOUBLE"),  # of the clip and the crop clips
        ("face_embedding", "JSON"),  # mean dlib face descriptor (128 floats; same person < 0.6 apart) or null
        ("n_embeddings", "INTEGER"),
        ("params", "JSON"),  # tracker settings used
        ("clip_frames", "INTEGER"),  # decoded frames of the clip (same on every row of a clip)
        ("face_presence", "DOUBLE"),  # fraction of the clip's frames with a face in some track (clip-level)
        ("faceless_bodies", "INTEGER"),  # person boxes holding no detected face on a typical person-detection
        # frame (median; clip-level; e.g. a torso whose head is out of view); null without a person detector
    ),
    description="L1: one row per person track (face + body), with crop clips",
)

HUMAN_TRACK_BOXES = TableSpec(
    "human_track_boxes",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),
        ("frame", "INTEGER"),
        ("t", "DOUBLE"),
        ("face_x1", "DOUBLE"),
        ("face_y1", "DOUBLE"),
        ("face_x2", "DOUBLE"),
        ("face_y2", "DOUBLE"),
        ("body_x1", "DOUBLE"),
        ("body_y1", "DOUBLE"),
        ("body_x2", "DOUBLE"),
        ("body_y2", "DOUBLE"),
        ("face_source", "VARCHAR"),  # detected | interpolated
        ("body_source", "VARCHAR"),  # detected | filled | estimated
        ("score", "DOUBLE"),  # face detector score on detected frames, else null
        ("detector", "VARCHAR"),  # detected frames: "primary" (backend face detector) or "rescue:<pass>"
    ),
    description="L1: frame-level face and body boxes of every track",
)

PERSON_COUNT = TableSpec(
    "person_count",
    (
        ("video_id", "VARCHAR"),
        ("status", "VARCHAR"),  # ok | no_faces
        ("reason", "VARCHAR"),
        ("person_count", "INTEGER"),
        ("n_tracks", "INTEGER"),
        ("max_simultaneous", "INTEGER"),  # most tracks sharing one frame: a lower bound
        ("n_merges", "INTEGER"),
        ("persons", "JSON"),  # [[track ids of person 1], ...]
        ("merges", "JSON"),  # [{"tracks": [...], "into": [...], "distance": d}, ...]
        ("threshold", "DOUBLE"),  # face-descriptor distance below which track groups merge
        ("method", "VARCHAR"),  # how the number was derived, in words
    ),
    description="L2: approximate number of distinct people, derived from L1 tracks",
)

DEMOGRAPHICS = TableSpec(
    "demographics",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),  # NULL on the single no_faces row
        ("status", "VARCHAR"),  # ok | low_confidence (not used downstream) | unavailable | no_faces | failed
        ("reason", "VARCHAR"),
        ("age", "DOUBLE"),  # median over sampled face crops
        ("gender", "VARCHAR"),  # mode
        ("gender_share", "DOUBLE"),  # vote share of the mode
        ("race", "VARCHAR"),  # mode (NULL offline: no race model)
        ("race_share", "DOUBLE"),
        ("votes", "JSON"),  # {"gender": {...}, "age_class": {...}, "race": {...}, "ages": [...], "male_scores": [...]}
        ("n_samples", "INTEGER"),  # crops analysed
        ("method", "VARCHAR"),  # estimator: ssrnet-v1 | utkface-tflite-v1 | deepface (model + weights: provenance)
        ("age_class", "VARCHAR"),  # child | adult (mode over crops, child below CHILD_BELOW_YEARS)
        ("age_confidence", "DOUBLE"),  # vote share of age_class
        ("male_score", "DOUBLE"),  # mean male probability over crops (offline models)
        ("n_unusable", "INTEGER"),  # sampled crops that could not be analysed
        ("gender_confidence", "DOUBLE"),  # ensemble: the smallest share of any member's crop votes siding with `gender`
    ),
    description="L3: per-track age / gender / race from face crops (low_confidence when the vote is split, the "
                "ensemble's models disagree or the model measured too inaccurate; unavailable when no model)",
)

HUMAN_VERDICTS = TableSpec(
    "human_verdicts",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),  # NULL on the single no_faces row
        ("status", "VARCHAR"),  # ok | no_faces | failed (no verdict: the crop clip could not be read)
        ("reason", "VARCHAR"),
        ("is_human", "BOOLEAN"),  # a real, photographed person (not drawn, animated, a statue, a print, a screen)
        ("score", "DOUBLE"),  # belief in a real person, 0..1 (is_human: score >= threshold)
        ("threshold", "DOUBLE"),
        ("method", "VARCHAR"),  # e.g. "face-statistics logistic regression 1 + describer"
        ("version", "VARCHAR"),  # rule, coefficients and prompt: changes whenever the verdict may
        ("reasons", "JSON"),  # the strongest evidence, in words
        ("stats_score", "DOUBLE"),  # the face statistics' own score
        ("features", "JSON"),  # the face statistics (core/vision/realness.py)
        ("model_score", "DOUBLE"),  # the describer's, when one is configured
        ("model_answer", "VARCHAR"),
        ("call_id", "VARCHAR"),  # model_calls.id of the describer's answer
        ("n_samples", "INTEGER"),  # face-crop frames measured
    ),
    description="L1 verdict per track: is the face a real person (drawn, animated, statue, printed, on-screen: no)",
)

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class TrackBox:
    frame: int
    t: float
    face: Box
    body: Box
    face_source: str
    body_source: str
    score: float | None = None


@dataclass
class Track:
    """One stored L1 track with its frame-level boxes (ordered by frame)."""

    video_id: str
    track_id: int
    first_frame: int
    last_frame: int
    first_s: float
    last_s: float
    coverage: float
    face_size_median: float
    fps: float
    face_clip_path: Path | None
    body_clip_path: Path | None
    face_embedding: list[float] | None = None
    boxes: list[TrackBox] = field(default_factory=list)

    @property
    def n_frames(self) -> int:
        return self.last_frame - self.first_frame + 1

    def box_at(self, frame: int) -> TrackBox | None:
        i = frame - self.first_frame
        if 0 <= i < len(self.boxes) and self.boxes[i].frame == frame:
            return self.boxes[i]
        return next((b for b in self.boxes if b.frame == frame), None)


def track_frames(warehouse: Warehouse, video_ids: Sequence[str]) -> dict[str, float]:
    """Frames of all face tracks per clip (what a batch's split weighs L7's clips by: it scores every track)."""
    rows = warehouse.query("SELECT video_id, sum(n_frames) AS n FROM human_tracks WHERE video_id IN (SELECT unnest(?)) "
                           "GROUP BY video_id", [list(video_ids)])
    return {r["video_id"]: float(r["n"] or 0.0) for r in rows}


def load_tracks(warehouse: Warehouse, video_id: str) -> list[Track]:
    """Stored tracks of a clip (status ok) with their boxes, ordered by track_id; [] when the clip
    has no faces or was not tracked yet."""
    rows = [r for r in warehouse.rows(HUMAN_TRACKS, video_id=video_id, order_by="track_id") if r["status"] == "ok"]
    if not rows:
        return []
    box_rows = warehouse.rows(HUMAN_TRACK_BOXES, video_id=video_id, order_by="track_id, frame")
    by_track: dict[int, list[TrackBox]] = {}
    for b in box_rows:
        by_track.setdefault(b["track_id"], []).append(TrackBox(
            frame=b["frame"], t=b["t"],
            face=(b["face_x1"], b["face_y1"], b["face_x2"], b["face_y2"]),
            body=(b["body_x1"], b["body_y1"], b["body_x2"], b["body_y2"]),
            face_source=b["face_source"], body_source=b["body_source"], score=b["score"],
        ))
    return [
        Track(
            video_id=video_id, track_id=r["track_id"], first_frame=r["first_frame"], last_frame=r["last_frame"],
            first_s=r["first_s"], last_s=r["last_s"], coverage=r["coverage"],
            face_size_median=r["face_size_median"], fps=r["fps"],
            face_clip_path=resolve(r["face_clip_path"]), body_clip_path=resolve(r["body_clip_path"]),
            face_embedding=r["face_embedding"], boxes=by_track.get(r["track_id"], []),
        )
        for r in rows
    ]


def boxes_by_frame(tracks: list[Track], kind: str = "face") -> dict[int, dict[int, Box]]:
    """{frame: {track_id: box}} for rendering; `kind` is "face" or "body"."""
    if kind not in ("face", "body"):
        raise ValueError(f"kind must be 'face' or 'body', got {kind!r}")
    out: dict[int, dict[int, Box]] = {}
    for tr in tracks:
        for b in tr.boxes:
            out.setdefault(b.frame, {})[tr.track_id] = b.face if kind == "face" else b.body
    return out


# The one rule naming people (key frames, `people` tables, speaker plot, question videos and their person
# options). Numbers, because options are lettered A-F: an option reads "B. Person 2", one symbol per thing. In the
# fingerprint of the numbered task families, whose rows store these numbers; the label assets only draw them in
# their metadata.
PERSON_NUMBER_RULE = "numbers-left-to-right-1"


def number_tracks(tracks: list[Track]) -> dict[int, int]:
    """A clip's person numbers: 1, 2, 3, ... for ALL its L1 tracks in a fixed order, left to right by the
    face centre at each track's first frame (ties by first frame, then track id).
    The same tracks always get the same numbers, whatever subset a question shows."""
    def first_x(tr: Track) -> float:
        f = tr.boxes[0].face if tr.boxes else (0.0, 0.0, 0.0, 0.0)
        return (f[0] + f[2]) / 2

    order = sorted(tracks, key=lambda tr: (first_x(tr), tr.first_frame, tr.track_id))
    return {tr.track_id: i for i, tr in enumerate(order, 1)}


def person_number(track_ids, numbers: dict[int, int]) -> int:
    """The number of one person made of several tracks (L2 merges a person who left and came back): the
    first (smallest) of its tracks' numbers."""
    return min(numbers[t] for t in track_ids if t in numbers)
