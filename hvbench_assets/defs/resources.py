"""Every Dagster resource, in one module: `settings`, `warehouse`, `mllm`, `vision`, `audio_models`, `benchmark`
and `evaluation`.

A field tied to a setting is declared `setting("HVBENCH_X")`: its default and description come from the one
settings table (hvbench_assets/settings_table.py), and `build_resources` fills it from the environment (a set
variable shows up as an EnvVar in the UI; an unset one keeps the default that works from a fresh clone).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from hvbench_assets import settings_table
from hvbench_assets.core.audio.backends import AudioBackendConfig, build
from hvbench_assets.core.benchmark.pool import PoolSettings, paper_targets, parse_targets
from hvbench_assets.core.evaluation import EvalConfig
from hvbench_assets.core.ingest.clip_filter import ClipFilter
from hvbench_assets.core.mllm import MllmClient, ModelNotConfigured, ModelRegistry, ModelSpec, RetryPolicy
from hvbench_assets.core.speakers.rules import DEFAULT_MIN_RUN
from hvbench_assets.core.vision.backends import VisionBackend, build_backend
from hvbench_assets.core.vision.count import SAME_PERSON_DISTANCE
from hvbench_assets.core.vision.demographics import ConfidenceRule, DeepFaceDemographics, DemographicsEstimator
from hvbench_assets.core.vision.gender_ensemble import build_estimator
from hvbench_assets.core.vision.pipeline import TrackingParams
from hvbench_assets.core.warehouse import Warehouse


def setting(name: str) -> Any:
    """A resource field backed by the settings-table entry `name` (default and description from there)."""
    s = settings_table.setting(name)
    return Field(default=s.default, description=f"{s.meaning} ({name})", json_schema_extra={"setting": name})


def env_or(name: str):
    """An EnvVar when the variable is set (visible as such in the UI), else the table's default.
    Dagster's EnvVar carries strings and ints only; floats and booleans are read here."""
    s = settings_table.setting(name)
    if not settings_table.is_set(name):
        return s.default
    if s.kind in (float, bool):
        return settings_table.value(name)
    return dg.EnvVar.int(name) if s.kind is int else dg.EnvVar(name)


def from_environment(cls: type[dg.ConfigurableResource]) -> dg.ConfigurableResource:
    """`cls` with every `setting(...)` field read from the environment."""
    return cls(**{field: env_or(info.json_schema_extra["setting"]) for field, info in cls.model_fields.items()
                  if isinstance(info.json_schema_extra, dict) and "setting" in info.json_schema_extra})


def profiled(version: str, *model_settings: str) -> str:
    """Code version plus the backend profile the code location was started with: switching
    offline <-> full swaps the models, so every partition of that asset must show as stale. Each of
    `model_settings` (a setting that picks a model) is added when it differs from its default, so choosing
    another model also shows the asset stale while the default's version stays as it was."""
    chosen = [f"{settings_table.value(n)}" for n in model_settings if settings_table.value(n) != settings_table.default(n)]
    return "-".join([version, settings_table.raw("HVBENCH_BACKEND_PROFILE") or "offline", *chosen])


# -- settings and warehouse ----------------------------------------------------------------------------------

class SettingsResource(dg.ConfigurableResource):
    """Where things live, which model backends run, the clip filter and the review app's address."""

    data_dir: str = setting("HVBENCH_DATA_DIR")
    inbox_dir: str = setting("HVBENCH_INBOX_DIR")
    allowed_roots: str = setting("HVBENCH_ALLOWED_ROOTS")
    backend_profile: str = setting("HVBENCH_BACKEND_PROFILE")
    min_clip_s: float = setting("HVBENCH_MIN_CLIP_S")
    max_clip_s: float = setting("HVBENCH_MAX_CLIP_S")
    min_width: int = setting("HVBENCH_MIN_WIDTH")
    min_height: int = setting("HVBENCH_MIN_HEIGHT")
    min_motion: float = setting("HVBENCH_MIN_MOTION")
    inbox_settle_s: float = setting("HVBENCH_INBOX_SETTLE_S")
    review_exclude: str = setting("HVBENCH_REVIEW_EXCLUDE")
    review_url: str = setting("HVBENCH_REVIEW_URL")

    def clip_filter(self) -> ClipFilter:
        return ClipFilter(
            min_duration_s=self.min_clip_s, max_clip_s=self.max_clip_s, min_width=self.min_width,
            min_height=self.min_height, min_motion=self.min_motion,
        )

    def data_path(self, *parts: str) -> Path:
        p = Path(self.data_dir).joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def inbox(self) -> Path:
        return Path(self.inbox_dir) if self.inbox_dir else Path(self.data_dir) / "inbox"

    @property
    def inbox_roots(self) -> list[Path]:
        """Folders outside the inbox that inbox symlinks may lead into (HVBENCH_ALLOWED_ROOTS)."""
        return [Path(p) for p in self.allowed_roots.split(os.pathsep) if p.strip()]

    @property
    def clips_dir(self) -> Path:
        return Path(self.data_dir) / "clips"

    def media_dir(self, video_id: str) -> Path:
        """Per-clip folder for derived media (crops, rendered question videos)."""
        p = Path(self.data_dir) / "media" / video_id
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def is_full(self) -> bool:
        if self.backend_profile not in ("offline", "full"):
            raise ValueError(f"backend_profile must be 'offline' or 'full', got {self.backend_profile!r}")
        return self.backend_profile == "full"


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse file (or DuckLake location). Empty path: <data_dir>/hvbench.duckdb."""

    path: str = setting("HVBENCH_WAREHOUSE")
    data_path: str = setting("HVBENCH_WAREHOUSE_DATA_PATH")
    catalog_wait_s: float = setting("HVBENCH_WAREHOUSE_WAIT_S")

    def get(self) -> Warehouse:
        return _warehouse(str(self.path or settings_table.warehouse_location()), self.data_path or None,
                          self.catalog_wait_s)


@functools.lru_cache(maxsize=8)
def _warehouse(path: str, data_path: str | None = None, catalog_wait_s: float | None = None) -> Warehouse:
    """One Warehouse per file and process, so its knowledge of created tables is kept between calls."""
    return Warehouse(path, data_path=data_path, catalog_wait_s=catalog_wait_s)


@functools.lru_cache(maxsize=4)
def _vision_backend(pid: int, profile: str, **settings: Any) -> VisionBackend:
    return build_backend(profile, **settings)


# -- model endpoints -----------------------------------------------------------------------------------------

class MllmResource(dg.ConfigurableResource):
    """Which models exist and how hard to push them. Keys are never fields: the registry names the variable
    holding each key, read at call time."""

    models_file: str = setting("HVBENCH_MODELS_FILE")
    describer_model: str = setting("HVBENCH_DESCRIBER_MODEL")  # overrides the file's `describer`
    max_concurrency: int = setting("HVBENCH_MLLM_MAX_CONCURRENCY")
    max_attempts: int = setting("HVBENCH_MLLM_MAX_ATTEMPTS")
    backoff_s: float = 1.0  # first retry delay, doubled per attempt

    def registry(self) -> ModelRegistry:
        import dataclasses

        reg = settings_table.model_registry(self.models_file or None)
        return dataclasses.replace(reg, describer_name=self.describer_model) if self.describer_model else reg

    def display_names(self) -> dict[str, str]:
        """Registry entry -> model id, for the report's legends ({} without a readable registry)."""
        return settings_table.model_display_names(self.models_file or None)

    def describer(self) -> ModelSpec:
        """Raises ModelNotConfigured naming what to set."""
        return self.registry().describer()

    def client(self, warehouse: Warehouse) -> MllmClient:
        return MllmClient(
            self.registry(), warehouse, max_concurrency=self.max_concurrency or None,
            retry=RetryPolicy(max_attempts=self.max_attempts, base_s=self.backoff_s),
        )


# -- label models --------------------------------------------------------------------------------------------

class VisionResource(dg.ConfigurableResource):
    """Vision models and tracker settings. The backend profile (offline | full) comes from `settings`."""

    face_detector: str = setting("HVBENCH_FACE_DETECTOR")
    upsample: int = 0  # dlib upsampling: 1 finds faces half the size, 4x slower
    detect_fps: float = 6.0
    detect_max_side: int = 0  # detector input size; 0: the detector's own (YuNet 480 px, HOG / mmod 640 px)
    quick_max_side: int = -1  # smaller size while every face is large; -1: the detector's own (YuNet 320 px); 0: off
    fine_max_side: int = 1280  # once per fine_every_s, detect at this size to catch small faces
    fine_every_s: float = 1.0
    fine_enlarge: float = 1.0  # 2.0 with fine_max_side=2560: 40 px faces in 1280 px frames, ~4x fine-pass cost
    max_gap_s: float = 2.5
    min_track_s: float = 0.5
    rescue: bool = True  # offline hog only: rotated / enlarged second look for tilted and small faces
    rescue_fps: float = 2.0  # whole-frame second looks per second (0: only around lost tracks)
    person_detector: str = setting("HVBENCH_PERSON_DETECTOR")
    person_conf: float = 0.4  # offline: YOLOX person score threshold (benchmarks/body_boxes.py)
    person_fps: float = 2.0  # person detections per second, on face-detection frames (0: none)
    yolo_weights: str = setting("HVBENCH_YOLO_WEIGHTS")
    deepface_detector: str = setting("HVBENCH_DEEPFACE_DETECTOR")
    device: str = setting("HVBENCH_VISION_DEVICE")
    deepface_home: str = setting("DEEPFACE_HOME")
    same_person_distance: float = SAME_PERSON_DISTANCE
    demographics_samples: int = 8
    demographics_model: str = setting("HVBENCH_DEMOGRAPHICS_MODEL")
    demographics_margin: float = -1.0  # face-crop margin per side (share of the face box); < 0: the model's default
    demographics_min_share: float = 0.75  # a track's child/adult (and, for an adult, gender) vote share for `ok`
    demographics_min_accuracy: float = 0.9  # an offline model's measured per-track child/adult (and, for an adult,
    # gender) accuracy for `ok` (docs/demographics.md); 0: no gate

    def backend(self, profile: str) -> VisionBackend:
        """The detectors, built once per process and settings: a batch's clips share them (building took ~60 ms
        per clip). A forked child builds its own (onnxruntime sessions do not cross a fork)."""
        return _vision_backend(os.getpid(), profile, face_detector=self.face_detector, upsample=self.upsample,
                               rescue=self.rescue, yolo_weights=self.yolo_weights,
                               deepface_detector=self.deepface_detector, person_detector=self.person_detector,
                               person_conf=self.person_conf, device=self.device, deepface_home=self.deepface_home)

    def tracking_params(self) -> TrackingParams:
        return TrackingParams(detect_fps=self.detect_fps, person_fps=self.person_fps, detect_max_side=self.detect_max_side or None,
                              quick_max_side=None if self.quick_max_side < 0 else self.quick_max_side,
                              fine_max_side=self.fine_max_side, fine_every_s=self.fine_every_s,
                              fine_enlarge=self.fine_enlarge,
                              max_gap_s=self.max_gap_s, min_track_s=self.min_track_s, rescue_fps=self.rescue_fps)

    def demographics_estimator(self, profile: str) -> DemographicsEstimator | None:
        """DeepFace in full mode (fails fast when missing); offline the shipped `demographics_model`, or None
        (`none`: unavailable rows)."""
        if profile == "full":
            return DeepFaceDemographics(deepface_home=self.deepface_home)
        if self.demographics_model == "none":
            return None
        return build_estimator(self.demographics_model, None if self.demographics_margin < 0 else self.demographics_margin)

    def demographics_rule(self, profile: str) -> ConfidenceRule:
        """The vote-share rule everywhere; the measured-accuracy gate for the offline models only (DeepFace,
        the paper's model, is not measured here)."""
        return ConfidenceRule(min_share=self.demographics_min_share,
                              min_accuracy=0.0 if profile == "full" else self.demographics_min_accuracy)


class AudioModelsResource(dg.ConfigurableResource):
    """Audio and active-speaker backends for L6-L10 and L7. Full models load once per process; which
    implementation runs (offline | full) comes from `settings.backend_profile`."""

    device: str = setting("HVBENCH_AUDIO_DEVICE")
    ast_model: str = "MIT/ast-finetuned-audioset-10-10-0.4593"
    sensevoice_model: str = "iic/SenseVoiceSmall"
    sensevoice_hub: str = "ms"  # ms (ModelScope) | hf
    sensevoice_dir: str = setting("HVBENCH_SENSEVOICE_DIR")
    age_gender_model: str = "audeering/wav2vec2-large-robust-24-ft-age-gender"
    light_asd_weights: str = setting("HVBENCH_LIGHT_ASD_WEIGHTS")
    light_asd_windows_s: list[float] = [1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6]  # scores averaged over these window lengths
    speaker_method: str = setting("HVBENCH_SPEAKER_METHOD")
    asd_device: str = setting("HVBENCH_ASD_DEVICE")
    speaking_min_run: int = DEFAULT_MIN_RUN  # frames; a track speaks when its longest positive run is longer
    veto_min_confidence: float = 0.7  # both voice and face class must be this sure to veto a speaker
    music_detector: str = setting("HVBENCH_MUSIC_DETECTOR")
    voice_gender: str = setting("HVBENCH_VOICE_GENDER")
    hub_offline: bool = setting("HF_HUB_OFFLINE")
    modelscope_cache: str = setting("MODELSCOPE_CACHE")

    def config(self, full: bool) -> AudioBackendConfig:
        return AudioBackendConfig(
            full=full, device=self.device, ast_model=self.ast_model, sensevoice_model=self.sensevoice_model,
            sensevoice_hub=self.sensevoice_hub, sensevoice_dir=self.sensevoice_dir,
            age_gender_model=self.age_gender_model, light_asd_weights=self.light_asd_weights,
            light_asd_windows_s=tuple(self.light_asd_windows_s), music_detector=self.music_detector,
            voice_gender=self.voice_gender, speaker_method=self.speaker_method, asd_device=self.asd_device,
            hub_offline=self.hub_offline, modelscope_cache=self.modelscope_cache,
        )

    def backend(self, kind: str, full: bool):
        """kind: tagger | transcriber | emotion | voice | asd."""
        if kind == "asd":
            from hvbench_assets.core.speakers.methods import build_scorer

            return build_scorer(self.config(full))
        return build(kind, self.config(full))


# -- benchmark assembly and evaluation ----------------------------------------------------------------------

class BenchmarkResource(dg.ConfigurableResource):
    """How the pool balances, how strict the leakage filter is, what the export takes, and which benchmark name
    (partition) the sensor registers and the demo builds."""

    name: str = setting("HVBENCH_BENCHMARK_NAME")
    benchmarks_dir: str = setting("HVBENCH_BENCHMARKS_DIR")
    targets: str = setting("HVBENCH_POOL_TARGETS")
    scale: float = setting("HVBENCH_POOL_SCALE")
    strict_ratio: bool = setting("HVBENCH_POOL_STRICT_RATIO")
    blind_models: str = setting("HVBENCH_BLIND_MODELS")
    blind_rotations: str = setting("HVBENCH_BLIND_ROTATIONS")
    leakage_alpha: float = setting("HVBENCH_LEAKAGE_ALPHA")
    leakage_max_share: float = setting("HVBENCH_LEAKAGE_MAX_SHARE")
    repair_rounds: int = setting("HVBENCH_LEAKAGE_REPAIR_ROUNDS")
    include_unreviewed: bool = setting("HVBENCH_EXPORT_UNREVIEWED")

    def folder(self, data_dir: str, name: str | None = None) -> Path:
        return Path(self.benchmarks_dir or Path(data_dir) / "benchmarks") / (name or self.name)

    def pool(self) -> PoolSettings:
        return PoolSettings(targets={**paper_targets(), **parse_targets(self.targets)}, scale=self.scale,
                            strict_ratio=self.strict_ratio, include_unreviewed=self.include_unreviewed)

    def blind_model_names(self) -> list[str]:
        return [m.strip() for m in self.blind_models.split(",") if m.strip()]


class EvaluationResource(dg.ConfigurableResource):
    """Where benchmarks live and how models are asked (frames, audio, judge). A change to any answer setting
    gives a new run id, so earlier runs stay comparable side by side."""

    benchmarks_dir: str = setting("HVBENCH_BENCHMARKS_DIR")  # each sub-folder with task JSONL files is a benchmark
    benchmark_roots: str = setting("HVBENCH_BENCHMARK_ROOTS")
    n_frames: int = setting("HVBENCH_EVAL_FRAMES")
    fps: float = setting("HVBENCH_EVAL_FPS")
    max_side: int = setting("HVBENCH_EVAL_MAX_SIDE")
    audio: str = setting("HVBENCH_EVAL_AUDIO")
    arms: str = setting("HVBENCH_EVAL_ARMS")
    circular: bool = setting("HVBENCH_EVAL_CIRCULAR")
    judge_model: str = setting("HVBENCH_EVAL_JUDGE")
    concurrency: int = setting("HVBENCH_EVAL_CONCURRENCY")
    human_baseline: str = setting("HVBENCH_HUMAN_BASELINE")
    repeats: int = setting("HVBENCH_EVAL_REPEATS")
    max_unparsed_rate: float = 0.1  # the eval_responses check warns above this share of unparsed replies
    item_max_unparsed: float = setting("HVBENCH_REPORT_ITEM_MAX_UNPARSED")
    bootstrap: int = setting("HVBENCH_REPORT_BOOTSTRAP")
    bootstrap_seed: int = setting("HVBENCH_REPORT_BOOTSTRAP_SEED")
    slice_min_items: int = setting("HVBENCH_REPORT_SLICE_MIN_ITEMS")

    def stats(self):
        from hvbench_assets.core.scoring.uncertainty import StatsSettings

        return StatsSettings(n_boot=max(1, self.bootstrap), seed=self.bootstrap_seed,
                             slice_min_items=max(1, self.slice_min_items))

    def roots(self, data_dir: str) -> dict[str, tuple[Path, Path | None]]:
        """Benchmark name -> (folder, video root or None): sub-folders of benchmarks_dir holding *.jsonl,
        then the explicit roots."""
        base = Path(self.benchmarks_dir or Path(data_dir) / "benchmarks")
        found: dict[str, tuple[Path, Path | None]] = {}
        if base.is_dir():
            # hidden folders are an export being written or the one it replaces (core/benchmark/export.py)
            found = {p.name: (p, None) for p in sorted(base.iterdir())
                     if p.is_dir() and not p.name.startswith(".") and any(p.rglob("*.jsonl"))}
        for part in self.benchmark_roots.split(";"):
            if "=" in part:
                name, paths = part.split("=", 1)
                folder, _, videos = paths.partition("|")
                found[name.strip()] = (Path(folder.strip()), Path(videos.strip()) if videos.strip() else None)
        return found

    def configs_for(self, model: str) -> list[EvalConfig]:
        """One config per run: a single unseeded run, or seeds 0..repeats-1, for every arm."""
        from hvbench_assets.core.evaluation.arms import parse_arms

        seeds = list(range(self.repeats)) if self.repeats > 1 else [None]
        return [EvalConfig(model=model, n_frames=None if self.fps else (self.n_frames or 8), fps=self.fps or None,
                           max_side=self.max_side, audio=self.audio, circular=self.circular,
                           judge_model=self.judge_model or None, concurrency=self.concurrency, seed=seed, arm=arm)
                for seed in seeds for arm in parse_arms(self.arms)]


RESOURCE_CLASSES = {"settings": SettingsResource, "warehouse": WarehouseResource, "mllm": MllmResource,
                    "vision": VisionResource, "audio_models": AudioModelsResource, "benchmark": BenchmarkResource,
                    "evaluation": EvaluationResource}


def configured_describer() -> ModelSpec | None:
    """The describer the configuration names now (None when none is usable). Read when definitions load: the
    code version of every asset it writes for names it."""
    try:
        return settings_table.model_registry().describer()
    except (ModelNotConfigured, ValueError, OSError):
        return None


def configured_ensemble() -> str:
    """The answering models and weights the configuration names now ("unconfigured" when they are not usable),
    for the code versions of the descriptive task assets."""
    from hvbench_assets.core.synthesis.calls import ensemble_fingerprint  # the synthesis stack, only when asked
    try:
        reg = settings_table.model_registry()
        return ensemble_fingerprint(reg.active(), reg.min_answerers)
    except (ModelNotConfigured, ValueError, OSError):
        return "unconfigured"


def build_resources() -> dict[str, dg.ConfigurableResource]:
    """Every resource by key, its setting fields read from the environment."""
    return {key: from_environment(cls) for key, cls in RESOURCE_CLASSES.items()}


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=build_resources())
