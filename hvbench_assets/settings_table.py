"""The one settings table: every environment variable hvbench reads, with its default and meaning.

The Dagster resources (defs/resources.py), the CLI, the review app, the scale-out commands, the configuration
reference (docs/configuration.md, checked against `docs_table()` by hvbench_assets_tests/test_docs.py) and
`hvbench status` all read this table; no other module writes an HVBENCH_* name with a default. `core/` reads no
environment at all: the callers here pass values in.

Regenerate the docs table after editing: `UPDATE_SNAPSHOTS=1 pytest hvbench_assets_tests/test_docs.py`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hvbench_assets.core.ingest.clip_filter import ClipFilter as _CLIP
from hvbench_assets.core.settings import PROJECT_ROOT

TRUE = ("1", "true", "yes", "on")
DOCS_FILE = PROJECT_ROOT / "docs" / "configuration.md"
ENV_EXAMPLE = PROJECT_ROOT / ".env.example"
_BEGIN = "<!-- settings table: generated from hvbench_assets/settings_table.py; do not edit by hand -->"
_END = "<!-- end of settings table -->"


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | int | float | bool
    meaning: str
    group: str
    shown: str = ""  # the default as the docs show it, when the value itself is machine-specific

    @property
    def kind(self) -> type:
        return type(self.default)

    @property
    def default_text(self) -> str:
        if self.shown:
            return self.shown
        if self.default == "":
            return "none"
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)


# the clip filter's defaults are the paper's values kept with the filter (core/ingest/clip_filter.py)
def _s(name, default, meaning, group, shown=""):
    return Setting(name, default, meaning, group, shown)


SETTINGS: tuple[Setting, ...] = (
    # -- where things live ------------------------------------------------------------------------------
    _s("HVBENCH_DATA_DIR", str(PROJECT_ROOT / "data"),
       "inbox, clips, derived media, reports, warehouse; stored media paths are relative to it", "paths", "data"),
    _s("HVBENCH_INBOX_DIR", "", "folder watched by `inbox_sensor` (empty: `<data dir>/inbox`)", "paths",
       "data/inbox"),
    _s("HVBENCH_ALLOWED_ROOTS", "", "folders (`:`-separated) that symlinks in the inbox may point into", "paths"),
    _s("HVBENCH_WAREHOUSE", "", "DuckDB file, or `ducklake:postgres:<conninfo>` ([scale-out.md](scale-out.md))",
       "paths", "data/hvbench.duckdb"),
    _s("HVBENCH_WAREHOUSE_DATA_PATH", "",
       "DuckLake only: folder (or bucket URL) for its Parquet files, needed when the catalog is created", "paths"),
    _s("HVBENCH_WAREHOUSE_WAIT_S", 120.0,
       "DuckLake only: how long writers wait for an unreachable Postgres catalog before failing", "paths"),
    _s("HVBENCH_BACKEND_PROFILE", "offline", "`offline` (CPU, packaged models) or `full` (the paper's models)",
       "paths"),
    # -- ingest ------------------------------------------------------------------------------------------
    _s("HVBENCH_INBOX_SETTLE_S", 10.0, "seconds a file must be unchanged before it is read", "ingest"),
    _s("HVBENCH_MIN_CLIP_S", _CLIP.min_duration_s, "shortest clip kept, seconds (appendix K)", "ingest"),
    _s("HVBENCH_MAX_CLIP_S", _CLIP.max_clip_s, "longest clip, seconds: longer scenes are cut (appendix K)", "ingest"),
    _s("HVBENCH_MIN_WIDTH", _CLIP.min_width, "minimum clip width in pixels (the paper: 1280)", "ingest"),
    _s("HVBENCH_MIN_HEIGHT", _CLIP.min_height, "minimum clip height in pixels (the paper: 480)", "ingest"),
    _s("HVBENCH_MIN_MOTION", _CLIP.min_motion, "minimum motion score (appendix K)", "ingest"),
    # -- labels: vision ----------------------------------------------------------------------------------
    _s("HVBENCH_FACE_DETECTOR", "yunet",
       "offline L1 faces: `yunet` (small/turned faces; the yuface wheel), `yunet_onnx` (the same network on "
       "onnxruntime: any Python, a seventh of the CPU, boxes within 1-2 px), `hog` (dlib, frontal) or `mmod` (dlib CNN, slow)", "vision"),
    _s("HVBENCH_PERSON_DETECTOR", "yolox",
       "offline L1 person boxes: `yolox` (shipped YOLOX-nano) or `none` (boxes estimated from the face) "
       "([bodies.md](bodies.md))", "vision"),
    _s("HVBENCH_YOLO_WEIGHTS", "yolov8n.pt", "full L1: YOLOv8 weights, a local path or a name in ultralytics' "
       "weights_dir", "vision"),
    _s("HVBENCH_DEEPFACE_DETECTOR", "retinaface", "full L1/L3: any DeepFace detector backend", "vision"),
    _s("HVBENCH_VISION_DEVICE", "auto", "full vision: the YOLOv8 person detector's device, same choices as "
       "`HVBENCH_AUDIO_DEVICE`", "vision"),
    _s("HVBENCH_DEMOGRAPHICS_MODEL", "ensemble",
       "offline L3: `ensemble` (SSR-Net, UTKFace CNN and mini-Xception vote on gender), `ssrnet`, `utkface-tflite` "
       "or `none` ([demographics.md](demographics.md))", "vision"),
    # -- labels: audio and speakers ----------------------------------------------------------------------
    _s("HVBENCH_AUDIO_DEVICE", "auto",
       "full audio models (AST, SenseVoice, wav2vec2; Light-ASD has `HVBENCH_ASD_DEVICE`): `auto` (`cuda:0` when "
       "torch sees a GPU, else `cpu`), `cpu`, `cuda` or `cuda:N`", "audio"),
    _s("HVBENCH_SENSEVOICE_DIR", "", "full L8/L9: a local folder with a pre-seeded SenseVoiceSmall (model.pt ...)",
       "audio"),
    _s("HVBENCH_LIGHT_ASD_WEIGHTS", "", "a Light-ASD checkpoint for the full profile (empty: the shipped weights)",
       "audio"),
    _s("HVBENCH_MUSIC_DETECTOR", "yamnet",
       "offline L6 music: `yamnet` (shipped weights) or `signal` ([audio.md](audio.md))", "audio"),
    _s("HVBENCH_VOICE_GENDER", "pitch", "offline L10 adult gender: `pitch`, `mlp` or `blend` ([audio.md](audio.md))",
       "audio"),
    _s("HVBENCH_SPEAKER_METHOD", "verified",
       "L7: `verified`, `combined`, `light_asd` or `lipsync` ([speakers.md](speakers.md))", "audio"),
    _s("HVBENCH_ASD_DEVICE", "auto", "Light-ASD's device: CUDA when present (torch / onnxruntime), else CPU",
       "audio"),
    # -- model endpoints ---------------------------------------------------------------------------------
    _s("HVBENCH_MODELS_FILE", "", "the model registry file ([../config/models.toml](../config/models.toml) when "
       "empty)", "mllm", "config/models.toml"),
    _s("HVBENCH_DESCRIBER_MODEL", "", "the registry entry writing L4/L5/L11 descriptions (default: the file's "
       "`describer`)", "mllm"),
    _s("HVBENCH_MLLM_MODELS", "", "the active answering models, `a,b` (default: the file's `active`, else every "
       "configured one: file entries and models set by their variables alone)", "mllm"),
    _s("HVBENCH_MIN_ANSWERERS", 3, "the fewest answering models a synthesis ensemble runs with (default: the "
       "file's `min_answerers`, else 3)", "mllm"),
    _s("HVBENCH_MLLM_MAX_CONCURRENCY", 0, "in-flight requests per model and process; 0: each model's own limit",
       "mllm"),
    _s("HVBENCH_MLLM_MAX_ATTEMPTS", 5, "attempts per model call (transient errors are retried with backoff)",
       "mllm"),
    _s("HVBENCH_MLLM_<NAME>_<FIELD>", "",
       "any field of registry entry NAME: `_BASE_URL`, `_MODEL`, `_API_KEY_ENV` (the NAME of the key's variable), "
       "`_MAX_FRAMES`, `_TIMEOUT_S`, `_LOCAL_PATH`, ... (core/mllm/registry.py); a local (`transformers`) VLM's "
       "`_DEVICE` (`auto` as for `HVBENCH_AUDIO_DEVICE`) and `_DTYPE` (`auto`: bfloat16, float16 on GPUs without it, "
       "on CUDA; float32 on the CPU)", "mllm",
       "the file's"),
    # -- review ------------------------------------------------------------------------------------------
    _s("HVBENCH_REVIEW_EXCLUDE", "", "tasks excluded from human review (abbreviations, comma-separated; `none`: "
       "review all)", "review", "AVAD,SCM,HC,AST,TSA"),
    _s("HVBENCH_REVIEW_URL", "http://127.0.0.1:8765", "where `hvbench review` serves the review app; task "
       "partitions in the Dagster UI link their question there ([ui.md](ui.md))", "review"),
    _s("HVBENCH_DAGSTER_URL", "http://127.0.0.1:3000", "the Dagster UI the review app links to", "review"),
    _s("HVBENCH_MAX_HEAD_COUNT", 200, "the largest head count an annotator may enter ([answer-key.md](answer-key.md))",
       "review"),
    _s("HVBENCH_REVIEW_MAX_BODY", 1_000_000, "review app: larger request bodies (bytes) are refused with 413",
       "review"),
    _s("HVBENCH_REVIEW_LEASE_MINUTES", 10.0, "review app: how long a reviewer holds a question", "review"),
    _s("HVBENCH_REVIEW_FAST_S", 5.0, "review app: a decision quicker than this, video unplayed, is marked fast",
       "review"),
    # -- benchmark assembly ------------------------------------------------------------------------------
    _s("HVBENCH_BENCHMARK_NAME", "hvbench", "the benchmark (partition of `eval_benchmarks`) the sensor registers "
       "and the demo builds", "benchmark"),
    _s("HVBENCH_BENCHMARKS_DIR", "", "where exported benchmarks live (empty: `<data dir>/benchmarks`); the "
       "evaluation stage looks there too", "benchmark", "data/benchmarks"),
    _s("HVBENCH_POOL_TARGETS", "", "per-task pool targets `ER=200,HC=174`; unset tasks keep the paper's",
       "benchmark", "the paper's"),
    _s("HVBENCH_POOL_SCALE", 1.0, "multiplies every pool target", "benchmark"),
    _s("HVBENCH_POOL_STRICT_RATIO", False, "shrink HC/ER strata to the exact paper ratio (else each stratum up to "
       "its share)", "benchmark"),
    _s("HVBENCH_BLIND_MODELS", "", "leakage filter models `a,b` (default: the active answering models)",
       "benchmark"),
    _s("HVBENCH_BLIND_ROTATIONS", "all", "`all`: blind answers over every rotation of the options; `none`: the "
       "published order only", "benchmark"),
    _s("HVBENCH_LEAKAGE_ALPHA", 0.05, "leakage filter: one-sided binomial test level", "benchmark"),
    _s("HVBENCH_LEAKAGE_MAX_SHARE", 0.75, "leakage filter: also removed when blind accuracy is above this share",
       "benchmark"),
    _s("HVBENCH_LEAKAGE_REPAIR_ROUNDS", 2, "blind-answered synthesis questions re-perturbed and re-tested up to "
       "this often (0: removed)", "benchmark"),
    _s("HVBENCH_EXPORT_UNREVIEWED", False, "export questions nobody reviewed yet (the manifest says so)",
       "benchmark"),
    # -- evaluation --------------------------------------------------------------------------------------
    _s("HVBENCH_BENCHMARK_ROOTS", "", "extra benchmarks anywhere: `name=/path;name2=/jsonl_dir|/video_root`",
       "evaluation"),
    _s("HVBENCH_EVAL_FRAMES", 8, "evenly spaced frames per video (unused with `HVBENCH_EVAL_FPS`)", "evaluation"),
    _s("HVBENCH_EVAL_FPS", 0.0, "one frame per 1/fps seconds instead of a frame count (0: off)", "evaluation"),
    _s("HVBENCH_EVAL_MAX_SIDE", 768, "longest frame side sent to the model", "evaluation"),
    _s("HVBENCH_EVAL_AUDIO", "auto", "`auto`, `always` or `never`", "evaluation"),
    _s("HVBENCH_EVAL_ARMS", "full", "modality arms, e.g. `full,frames,audio,text` (core/evaluation/arms.py)",
       "evaluation"),
    _s("HVBENCH_EVAL_CIRCULAR", False, "circular evaluation: every rotation of the options", "evaluation"),
    _s("HVBENCH_EVAL_JUDGE", "", "a registry model that maps unparsed replies to a letter; on open-ended items it "
       "grades every reply against the reference", "evaluation"),
    _s("HVBENCH_EVAL_CONCURRENCY", 4, "requests in flight per evaluation run", "evaluation"),
    _s("HVBENCH_EVAL_REPEATS", 1, "runs per model with request seeds 0..repeats-1 (the report averages them)",
       "evaluation"),
    _s("HVBENCH_HUMAN_BASELINE", "", "JSON or CSV file of human per-task accuracy", "evaluation"),
    _s("HVBENCH_REPORT_ITEM_MAX_UNPARSED", 0.5, "models above this unparsed share are left out of item statistics",
       "evaluation"),
    _s("HVBENCH_REPORT_BOOTSTRAP", 2000, "resamples of the clip-clustered intervals and paired comparisons",
       "evaluation"),
    _s("HVBENCH_REPORT_BOOTSTRAP_SEED", 0, "seed of those resamples", "evaluation"),
    _s("HVBENCH_REPORT_SLICE_MIN_ITEMS", 30, "demographic slices with fewer items show their count only",
       "evaluation"),
    # -- scale-out ---------------------------------------------------------------------------------------
    _s("HVBENCH_CLUSTER_DIR", "/tmp/hvbench-cluster", "`scripts/cluster.sh`: the local cluster's folder", "scale"),
    _s("HVBENCH_CLUSTER_NICE", "", "`scripts/cluster.sh`: CPU priority (e.g. `-10`) of the new session's scheduling "
       "group", "scale"),
    _s("HVBENCH_DAGSTER_PG_URL", "", "the cluster's Dagster instance storage (deploy/cluster/dagster.yaml)",
       "scale"),
    _s("HVBENCH_RAY_JOBS_ADDRESS", "", "the Ray head's job server, e.g. `http://ray-head:8265` "
       "(deploy/cluster/dagster.yaml)", "scale"),
    _s("HVBENCH_RUN_WORKERS", "preloaded", "`preloaded`: the code server forks each run's worker from a process that "
       "imported the definitions once; `spawn`: Dagster's fresh interpreter per run ([configuration.md]"
       "(configuration.md#run-workers))", "scale"),
    _s("HVBENCH_BACKFILL_CLIPS_PER_RUN", 8, "clips per run of a backfill launched from the UI (Dagster's "
       "`BackfillPolicy.multi_run`); `1`: one run per clip, as `scripts/cluster.sh` sets so runs spread over nodes "
       "([configuration.md](configuration.md#clips-per-run))", "scale"),
    _s("HVBENCH_RAY_GPU", "auto", "`on`, `off` or `auto` (GPU placement with the full profile)", "scale"),
    # -- the test suite ----------------------------------------------------------------------------------
    _s("HVBENCH_CLUSTER_TEST", True, "`0` leaves the two-node cluster scenario out of a local run "
       "([scale-out.md](scale-out.md))", "tests"),
    _s("HVBENCH_CLUSTER_TEST_LIMIT_S", 1200, "hard time limit of the cluster scenario, seconds", "tests"),
    _s("HVBENCH_UI_SCREENSHOT", "", "a folder: the UI browser tests save their pages there under the names docs/img "
       "uses (`HVBENCH_UI_SCREENSHOT=docs/img` retakes the screenshots of [ui.md](ui.md))", "tests"),
    # -- third-party caches, read at the boundary and passed into core -----------------------------------
    _s("HF_HUB_OFFLINE", False, "Hugging Face: use cached models only (the demo sets it)", "third-party"),
    _s("MODELSCOPE_CACHE", "", "ModelScope cache (SenseVoice)", "third-party", "~/.cache/modelscope/hub"),
    _s("DEEPFACE_HOME", "", "DeepFace keeps weights in `$DEEPFACE_HOME/.deepface/weights`", "third-party", "~"),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name} is not in the settings table (hvbench_assets/settings_table.py)") from None


def default(name: str):
    return setting(name).default


def raw(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The variable's text, stripped ('' when unset)."""
    return (os.environ if environ is None else environ).get(setting(name).name, "").strip()


def is_set(name: str, environ: Mapping[str, str] | None = None) -> bool:
    return bool(raw(name, environ))


def value(name: str, environ: Mapping[str, str] | None = None):
    """The typed value: the variable when set (non-empty), else the default. A malformed number fails naming it."""
    s, text = setting(name), raw(name, environ)
    if not text:
        return s.default
    if s.kind is bool:
        return text.lower() in TRUE
    if s.kind in (int, float):
        try:
            return s.kind(text)
        except ValueError:
            what = "a whole number" if s.kind is int else "a number"
            raise ValueError(f"environment variable {name}={text!r} is not {what}") from None
    return text


def registry_settings(environ: Mapping[str, str] | None = None) -> dict:
    """The registry-wide settings that replace the models file's own values when set."""
    return {"active": raw("HVBENCH_MLLM_MODELS", environ), "describer": raw("HVBENCH_DESCRIBER_MODEL", environ),
            "min_answerers": raw("HVBENCH_MIN_ANSWERERS", environ)}


def model_registry(models_file: str | Path | None = None, environ: Mapping[str, str] | None = None):
    """The MLLM registry: `models_file` (else HVBENCH_MODELS_FILE, else config/models.toml) with the
    HVBENCH_MLLM_<NAME>_* overrides of `environ` (the process environment), API keys read from it at call time."""
    from hvbench_assets.core.mllm import load_registry

    env = os.environ if environ is None else environ
    return load_registry(models_file or raw("HVBENCH_MODELS_FILE", env) or None, environ=env, keys=env,
                         **registry_settings(env))


def model_display_names(models_file: str | Path | None = None) -> dict[str, str]:
    """Registry entry -> model id, for reports naming models as readers know them; {} without a readable registry."""
    from hvbench_assets.core.mllm import ModelNotConfigured

    try:
        return model_registry(models_file).display_names()
    except ModelNotConfigured:
        return {}


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    return Path(value("HVBENCH_DATA_DIR", environ))


def warehouse_location(environ: Mapping[str, str] | None = None) -> Path:
    """HVBENCH_WAREHOUSE, else <data dir>/hvbench.duckdb (Path keeps a DuckLake location's text)."""
    return Path(raw("HVBENCH_WAREHOUSE", environ) or data_dir(environ) / "hvbench.duckdb")


def open_warehouse(location: str | os.PathLike | None = None, data_path: str | os.PathLike | None = None,
                   environ: Mapping[str, str] | None = None):
    """The Warehouse at `location` (default: warehouse_location()), with the DuckLake settings of the
    environment (HVBENCH_WAREHOUSE_DATA_PATH unless `data_path` is given, HVBENCH_WAREHOUSE_WAIT_S) passed in."""
    from hvbench_assets.core.warehouse import Warehouse

    return Warehouse(location or warehouse_location(environ),
                     data_path=data_path or raw("HVBENCH_WAREHOUSE_DATA_PATH", environ) or None,
                     catalog_wait_s=value("HVBENCH_WAREHOUSE_WAIT_S", environ))


# -- status and docs -----------------------------------------------------------------------------------------

def status_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """`hvbench status`: every setting with its current value (set ones marked) and default."""
    lines = ["\nsettings (* set in the environment):"]
    root = data_dir(environ)
    derived = {"HVBENCH_INBOX_DIR": root / "inbox", "HVBENCH_WAREHOUSE": warehouse_location(environ),
               "HVBENCH_BENCHMARKS_DIR": root / "benchmarks"}  # defaults that follow the data root
    for s in SETTINGS:
        if "<" in s.name:
            env = os.environ if environ is None else environ
            prefix = s.name.split("<", 1)[0]
            names = sorted(n for n in env if n.startswith(prefix) and n not in _BY_NAME)
            for n in names:
                lines.append(f"  * {n} = {env[n]}")
            continue
        current = raw(s.name, environ)
        mark = "*" if current else " "
        lines.append(f"  {mark} {s.name} = {current or derived.get(s.name, s.default_text)}")
    return lines


def docs_table() -> str:
    """The Markdown table docs/configuration.md carries between its markers."""
    rows = [_BEGIN, "", "| variable | default | meaning |", "|---|---|---|"]
    rows += [f"| `{s.name}` | `{s.default_text}` | {s.meaning} |" for s in SETTINGS]
    return "\n".join(rows + ["", _END])


def docs_section(text: str) -> str:
    """The generated part of a configuration doc (empty when the markers are missing)."""
    match = re.search(re.escape(_BEGIN) + r".*?" + re.escape(_END), text, re.S)
    return match.group(0) if match else ""


def env_example() -> str:
    """.env.example: every setting commented out at its default (the test suite's and third-party ones left out),
    then the offline switches the demo also sets."""
    lines = ["# Copy to .env (dagster dev / dg dev read it) or export these. All are optional: each is shown at its",
             "# default. Generated from hvbench_assets/settings_table.py (docs/configuration.md explains them)."]
    group = ""
    for s in SETTINGS:
        if s.group in ("tests", "third-party") or "<" in s.name:
            continue
        if s.group != group:
            group = s.group
            lines.append(f"# -- {group}")
        meaning = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", s.meaning).replace("`", "")
        shown = "" if s.default == "" else s.default_text  # empty: unset, the default
        lines.append(f"# {s.name}={shown}  # {meaning}")
    lines += ["# Offline runs: make hub loads fail at once instead of retrying", "HF_HUB_OFFLINE=1", "YOLO_OFFLINE=1"]
    return "\n".join(lines) + "\n"


def write_docs(path: Path = DOCS_FILE, env_file: Path = ENV_EXAMPLE) -> bool:
    """Replaces the generated table in `path` and rewrites `env_file`; True when either changed."""
    text = path.read_text()
    old = docs_section(text)
    if not old:
        raise ValueError(f"{path} has no settings-table markers ({_BEGIN} ... {_END})")
    new = text.replace(old, docs_table())
    changed = new != text or env_file.read_text() != env_example()
    if new != text:
        path.write_text(new)
    env_file.write_text(env_example())
    return changed
