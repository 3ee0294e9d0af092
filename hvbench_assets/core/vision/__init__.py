"""L1-L3 vision labels: face detection and tracking, body boxes, person count, demographics."""

from hvbench_assets.core.vision.tables import (
    DEMOGRAPHICS,
    HUMAN_TRACK_BOXES,
    HUMAN_TRACKS,
    HUMAN_VERDICTS,
    PERSON_COUNT,
    PERSON_LETTER_RULE,
    Box,
    Track,
    TrackBox,
    boxes_by_frame,
    letter_tracks,
    load_tracks,
    person_letter,
)

__all__ = [
    "DEMOGRAPHICS", "HUMAN_TRACKS", "HUMAN_TRACK_BOXES", "HUMAN_VERDICTS", "PERSON_COUNT", "PERSON_LETTER_RULE", "Box",
    "Track", "TrackBox", "boxes_by_frame", "letter_tracks", "load_tracks", "person_letter",
]
