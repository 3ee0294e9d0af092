"""Warehouse tables of the audio labels L6, L8, L9, L10 (one row per clip each)."""

from hvbench_assets.core.warehouse import TableSpec

_STATUS = (("video_id", "VARCHAR"), ("status", "VARCHAR"), ("reason", "VARCHAR"))

AUDIO_TAGS = TableSpec(
    "audio_tags",
    _STATUS + (
        ("is_speech", "BOOLEAN"),
        ("sound_type", "VARCHAR"),  # top tag: speech / silence / other_sound offline, an AudioSet class with AST
        ("tags", "JSON"),  # [{"label", "score"}] best first
        ("speech_s", "DOUBLE"),
        ("speech_segments", "JSON"),  # [[start_s, end_s], ...] from the VAD
        ("loudness_db", "DOUBLE"),
        ("duration_s", "DOUBLE"),
        ("audio_cache", "VARCHAR"),  # the shared 16 kHz decode
    ),
    description="L6: sound type of the clip and whether it holds speech (gates L7-L10)",
)

TRANSCRIPT = TableSpec(
    "transcript",
    _STATUS + (
        ("language", "VARCHAR"),
        ("text", "VARCHAR"),
        ("n_chars", "INTEGER"),
        ("words", "JSON"),  # [{"word", "start_s", "end_s", "conf"}] when the backend times words
        ("segments", "JSON"),  # [{"start_s", "end_s", "text", ...}]
    ),
    description="L8: speech transcript with language and timing",
)

SPEECH_EMOTION = TableSpec(
    "speech_emotion",
    _STATUS + (("emotion", "VARCHAR"), ("score", "DOUBLE")),
    description="L9: emotion of the voice",
)

VOICE_DEMOGRAPHICS = TableSpec(
    "voice_demographics",
    _STATUS + (
        ("voice_class", "VARCHAR"),  # male | female | child
        ("confidence", "DOUBLE"),
        ("gender_probs", "JSON"),  # {"male", "female"}; heuristic: shares of voiced frames
        ("child_prob", "DOUBLE"),
        ("age_years", "DOUBLE"),
        ("method", "VARCHAR"),  # model | heuristic
        ("pitch_hz", "DOUBLE"),
        ("segments", "JSON"),  # heuristic: class per voiced stretch (mixed voices show up here)
    ),
    description="L10: voice gender / child-or-adult / age",
)

AUDIO_TABLES = (AUDIO_TAGS, TRANSCRIPT, SPEECH_EMOTION, VOICE_DEMOGRAPHICS)
