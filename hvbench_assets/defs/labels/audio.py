"""L6 audio_tags, L8 transcript, L9 speech_emotion, L10 voice_demographics: thin assets over core.audio."""


import dagster as dg

from hvbench_assets.core.audio import labels
from hvbench_assets.core.audio.cache import cache_path, clip_audio
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.audio.tables import (
    AUDIO_TAGS,
    SPEECH_EMOTION,
    TRANSCRIPT,
    VOICE_DEMOGRAPHICS,
)
from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.ingest.tables import ClipNotFound, load_clip
from hvbench_assets.core.media import MediaError, NoAudioError
from hvbench_assets.core.warehouse import TableSpec
from hvbench_assets.runtime.batch import CLIP_BACKFILL_POLICY, per_clip
from hvbench_assets.runtime.executor import FORK_TAG
from hvbench_assets.defs.metadata import materialization, paths, rounded, row_counts, table_definition
from hvbench_assets.defs.partitions import videos_partitions
from hvbench_assets.defs.resources import AudioModelsResource, SettingsResource, WarehouseResource, profiled

# transcript 3: the reused recogniser starts each clip from its fresh state; 4: bounded search (maxhmmpf, maxwpf)
# audio_tags 3: music from YAMNet by default (music_evidence names the detector)
BASE_VERSIONS = {"audio_tags": "3", "transcript": "4", "speech_emotion": "1", "voice_demographics": "3"}
CODE_VERSIONS = {k: profiled(v) for k, v in BASE_VERSIONS.items()}


def load_clip_audio(settings: SettingsResource, warehouse: WarehouseResource, video_id: str):
    """(clip, audio) with audio None when the clip has no audio stream; bad input -> dg.Failure."""
    try:
        clip = load_clip(warehouse.get(), video_id)
    except ClipNotFound as exc:
        raise dg.Failure(description=str(exc)) from exc
    if not clip.has_audio:
        return clip, None
    try:
        return clip, clip_audio(clip.path, clip.sha256, settings.media_dir(video_id))
    except NoAudioError:
        return clip, None
    except MediaError as exc:
        raise dg.Failure(description=str(exc), metadata=paths(path=clip.path)) from exc


def run_backend(fn, *args):
    """Model-unavailable in the full profile is a configuration problem: fail with its message."""
    try:
        return fn(*args)
    except ModelUnavailable as exc:
        raise dg.Failure(description=str(exc)) from exc


def write(warehouse: WarehouseResource, spec: TableSpec, video_id: str, row: dict, backend, version: str,
          extra: dict | None = None) -> dg.MaterializeResult:
    # rows carry the version of the backend that really ran (resources may override the env profile)
    provenance = {"backend": backend.backend, "model": backend.model, "code_version": f"{version}-{backend.backend}"}
    warehouse.get().replace(spec, {"video_id": video_id}, [row], provenance=provenance)
    shown = {k: v for k, v in row.items() if k not in ("words", "speech_segments") and v is not None}
    preview = "| field | value |\n|---|---|\n" + "\n".join(f"| {k} | {str(rounded(v))[:200]} |" for k, v in shown.items())
    return dg.MaterializeResult(metadata=materialization({
        **row_counts(warehouse.get(), spec, 1),
        "status": row["status"], "backend": backend.backend, "model": backend.model,
        "preview": dg.MetadataValue.md(preview), **(extra or {}),
    }))


def gated_label(context, settings, warehouse, audio_models, kind: str, spec: TableSpec, compute) -> dg.MaterializeResult:
    """Shared body of L8-L10: gate on L6 (no_audio / no_speech rows), else run the backend."""
    video_id = context.partition_key
    backend = audio_models.backend(kind, settings.is_full)
    tags = (warehouse.get().rows(AUDIO_TAGS, video_id=video_id) or [None])[0]
    gate = labels.speech_gate(tags)
    version = BASE_VERSIONS[spec.name]
    if gate is not None:
        return write(warehouse, spec, video_id, gate, backend, version)
    _, audio = load_clip_audio(settings, warehouse, video_id)
    if audio is None:
        return write(warehouse, spec, video_id, labels.status_row("no_audio", "the clip has no audio stream"), backend, version)
    row = run_backend(compute, backend, audio, tags)
    return write(warehouse, spec, video_id, row, backend, version)


# pool: CPU-heavy, across runs at most one per core (runtime/executor.py)
COMMON = dict(partitions_def=videos_partitions, backfill_policy=CLIP_BACKFILL_POLICY, group_name="labels", pool="cpu")


@dg.asset(**COMMON, deps=["video_probe"], kinds={"audio", "duckdb"}, code_version=CODE_VERSIONS["audio_tags"],
          metadata=table_definition(AUDIO_TAGS),
          description="L6: sound type of the clip (speech / silence / other sound / music, or AudioSet tags), speech "
                      "segments, and music alongside speech (music_s, speech_music_s)")
@per_clip
def audio_tags(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
               audio_models: AudioModelsResource) -> dg.MaterializeResult:
    video_id = context.partition_key
    tagger = audio_models.backend("tagger", settings.is_full)
    clip, audio = load_clip_audio(settings, warehouse, video_id)
    if audio is None:
        row = {**labels.status_row("no_audio", f"{to_stored(clip.path)} has no audio stream"), "is_speech": False,
               "is_music": False, "duration_s": clip.duration_s}
    else:
        row = {**run_backend(labels.tags_row, tagger, audio),
               "audio_cache": to_stored(cache_path(settings.media_dir(video_id), clip.sha256))}
    return write(warehouse, AUDIO_TAGS, video_id, row, tagger, BASE_VERSIONS["audio_tags"],
                 {"is_speech": bool(row.get("is_speech")), "is_music": bool(row.get("is_music")),
                  "sound_type": row.get("sound_type") or row["status"]})


# forked: pocketsphinx holds the GIL for a whole utterance, so only a process overlaps it with L1 (runtime/executor.py)
@dg.asset(**COMMON, deps=["audio_tags"], kinds={"audio", "duckdb"}, code_version=CODE_VERSIONS["transcript"],
          metadata=table_definition(TRANSCRIPT), op_tags={FORK_TAG: "fork"},
          description="L8: transcript of the speech with language and word/segment timing; language unknown and "
                      "status low_confidence when the recogniser's evidence does not support English")
@per_clip
def transcript(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
               audio_models: AudioModelsResource) -> dg.MaterializeResult:
    return gated_label(context, settings, warehouse, audio_models, "transcriber", TRANSCRIPT,
                       lambda b, audio, tags: labels.transcript_row(b, audio, tags["speech_segments"]))


@dg.asset(**COMMON, deps=["audio_tags"], kinds={"audio", "duckdb"}, code_version=CODE_VERSIONS["speech_emotion"],
          metadata=table_definition(SPEECH_EMOTION),
          description="L9: emotion of the voice (SenseVoice tag; unavailable offline)")
@per_clip
def speech_emotion(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                   audio_models: AudioModelsResource) -> dg.MaterializeResult:
    return gated_label(context, settings, warehouse, audio_models, "emotion", SPEECH_EMOTION,
                       lambda b, audio, tags: labels.emotion_row(b, audio))


@dg.asset(**COMMON, deps=["audio_tags"], kinds={"audio", "duckdb"}, code_version=CODE_VERSIONS["voice_demographics"],
          metadata=table_definition(VOICE_DEMOGRAPHICS),
          description="L10: voice class male / female / child with confidence; class, confidence and stored "
                      "probabilities come from one rule (argmax of class_probs)")
@per_clip
def voice_demographics(context: dg.AssetExecutionContext, settings: SettingsResource, warehouse: WarehouseResource,
                       audio_models: AudioModelsResource) -> dg.MaterializeResult:
    return gated_label(context, settings, warehouse, audio_models, "voice", VOICE_DEMOGRAPHICS,
                       lambda b, audio, tags: labels.voice_row(b, audio))


__all__ = ["audio_tags", "transcript", "speech_emotion", "voice_demographics"]
