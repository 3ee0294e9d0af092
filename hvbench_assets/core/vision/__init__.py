"""L1-L3 vision labels: face detection and tracking, body boxes, person count, demographics."""

from hvbench_assets.core.vision.tables import (
    DEMOGRAPHICS,
    HUMAN_TRACK_BOXES,
    HUMAN_TRACKS,
    HUMAN_VERDICTS,
    PERSON_COUNT,
    PERSON_NUMBER_RULE,
    Box,
    Track,
    TrackBox,
    boxes_by_frame,
    load_tracks,
    number_tracks,
    person_number,
)

__all__ = [
    "DEMOGRAPHICS", "HUMAN_TRACKS", "HUMAN_TRACK_BOXES", "HUMAN_VERDICTS", "PERSON_COUNT", "PERSON_NUMBER_RULE", "Box",
    "Track", "TrackBox", "boxes_by_frame", "load_tracks", "number_tracks", "person_number",
]
