"""Warehouse tables of the audio labels L6, L8, L9, L10 (one row per clip each)."""

from hvbench_assets.core.warehouse import TableSpec

_STATUS = (("video_id", "VARCHAR"), ("status", "VARCHAR"), ("reason", "VARCHAR"))
# transcript status: ok | low_confidence | no_speech | no_audio | failed (see task_predicates.is_trusted_english)

AUDIO_TAGS = TableSpec(
    "audio_tags",
    _STATUS + (
        ("is_speech", "BOOLEAN"),
        ("sound_type", "VARCHAR"),  # top tag: speech / music / silence / other_sound offline, an AudioSet class with AST
        ("tags", "JSON"),  # [{"label", "score"}] best first
        ("speech_s", "DOUBLE"),
        ("speech_segments", "JSON"),  # [[start_s, end_s], ...] from the VAD
        ("loudness_db", "DOUBLE"),
        ("duration_s", "DOUBLE"),
        ("audio_cache", "VARCHAR"),  # the shared 16 kHz decode
        ("is_music", "BOOLEAN"),  # music or singing anywhere (alongside speech: "speech over music")
        ("music_score", "DOUBLE"),  # offline: time share of music; AST: best music-class score
        ("music_s", "DOUBLE"),
        ("music_segments", "JSON"),  # [[start_s, end_s], ...]
        ("speech_music_s", "DOUBLE"),  # seconds of speech with music under it
        ("music_evidence", "JSON"),  # {"method": yamnet, music_max, top_classes... | signal, tonal_share, beat_strength}
    ),
    description="L6: sound type of the clip, whether it holds speech (gates L7-L10) and music alongside it",
)

TRANSCRIPT = TableSpec(
    "transcript",
    _STATUS + (
        ("language", "VARCHAR"),
        ("text", "VARCHAR"),
        ("n_chars", "INTEGER"),
        ("words", "JSON"),  # [{"word", "start_s", "end_s", "conf"}] when the backend times words
        ("segments", "JSON"),  # [{"start_s", "end_s", "text", ...}]
        ("language_evidence", "JSON"),  # what the language rests on, e.g. {"method", "confidence", ...}
    ),
    description="L8: speech transcript with language and timing; status low_confidence + language unknown "
                "when the recogniser's evidence does not support English (text kept)",
)

SPEECH_EMOTION = TableSpec(
    "speech_emotion",
    _STATUS + (("emotion", "VARCHAR"), ("score", "DOUBLE")),
    description="L9: emotion of the voice",
)

VOICE_DEMOGRAPHICS = TableSpec(
    "voice_demographics",
    _STATUS + (
        ("voice_class", "VARCHAR"),  # male | female | child: argmax of class_probs (voice.decide)
        ("confidence", "DOUBLE"),  # class_probs[voice_class]
        ("gender_probs", "JSON"),  # {"male", "female"}: the adult class_probs renormalised
        ("child_prob", "DOUBLE"),  # class_probs["child"]
        ("age_years", "DOUBLE"),
        ("method", "VARCHAR"),  # model | heuristic (pitch) | mlp+pitch (gender MLP, child from pitch)
        ("pitch_hz", "DOUBLE"),
        ("segments", "JSON"),  # heuristic: class per voiced stretch (mixed voices show up here)
        ("class_probs", "JSON"),  # {"male", "female", "child"} summing to 1, the one input of the decision
    ),
    description="L10: voice gender / child-or-adult / age",
)

AUDIO_TABLES = (AUDIO_TAGS, TRANSCRIPT, SPEECH_EMOTION, VOICE_DEMOGRAPHICS)
