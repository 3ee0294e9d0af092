"""Warehouse tables of L7: per-frame speaker scores (the network's part) and the speaking verdicts (one row per
face track each)."""

from hvbench_assets.core.warehouse import TableSpec

SPEAKER_FRAME_SCORES = TableSpec(
    "speaker_frame_scores",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),  # null on a clip-level status row (no_faces / no_speech / no_audio)
        ("status", "VARCHAR"),  # ok | failed | a clip-level status
        ("reason", "VARCHAR"),
        ("fps", "DOUBLE"),
        ("first_frame", "INTEGER"),
        ("n_frames", "INTEGER"),
        ("scores", "JSON"),  # one score per track frame; > 0 = speaking
        ("method", "VARCHAR"),  # combined | light_asd | lipsync: what produced the scores (core/speakers/methods.py)
        ("method_note", "VARCHAR"),  # why another method than the configured one ran (weights failed to load)
    ),
    description="L7 evidence: per-track active-speaker score per frame, before the run rule and the veto",
)

SPEAKER_SCORES = TableSpec(
    "speaker_scores",
    (
        ("video_id", "VARCHAR"),
        ("track_id", "INTEGER"),  # null on a clip-level status row (no_faces / no_speech / no_audio)
        ("status", "VARCHAR"),
        ("reason", "VARCHAR"),
        ("fps", "DOUBLE"),
        ("first_frame", "INTEGER"),
        ("n_frames", "INTEGER"),
        ("scores", "JSON"),  # one score per track frame; > 0 = speaking
        ("longest_run", "INTEGER"),
        ("longest_run_start", "INTEGER"),  # index into scores
        ("positive_share", "DOUBLE"),
        ("min_run", "INTEGER"),
        ("raw_speaking", "BOOLEAN"),  # longest_run > min_run
        ("speaking", "BOOLEAN"),  # after the veto
        ("veto_reason", "VARCHAR"),
        ("voice_class", "VARCHAR"),
        ("face_class", "VARCHAR"),
        ("person", "INTEGER"),  # index of the track's person among the clip's L2 persons (person_count.persons)
        ("person_tracks", "JSON"),  # all track ids of that person
        ("person_speaking", "BOOLEAN"),  # any track of that person speaks
        ("method", "VARCHAR"),  # combined | light_asd | lipsync: what produced the scores (core/speakers/methods.py)
        ("method_note", "VARCHAR"),  # why another method than the configured one ran (weights failed to load)
    ),
    description="L7: per-track active speaker scores, longest positive run and speaking flag, and per L2 person",
)
