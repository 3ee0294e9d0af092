"""Named MLLM endpoints: one TOML file (config/models.toml) plus environment overrides.

A model entry names where to send requests and how much to send, never a key: `api_key_env` is
the NAME of the environment variable that holds the key, read only when a request is built.

Environment overrides (NAME is the entry name upper-cased, non-alphanumerics as `_`):
  HVBENCH_MODELS_FILE              another registry file
  HVBENCH_MLLM_<NAME>_BASE_URL     endpoint (…/v1); an entry without one is "not configured"
  HVBENCH_MLLM_<NAME>_MODEL        model id sent to the endpoint
  HVBENCH_MLLM_<NAME>_API_KEY_ENV  which variable holds the key
  HVBENCH_MLLM_<NAME>_<FIELD>      any other field (MAX_FRAMES, TIMEOUT_S, WEIGHT, LOCAL_PATH, DEVICE, …)
  HVBENCH_MLLM_MODELS=a,b          the active models (ensembles, evaluation); default: every configured one
  HVBENCH_DESCRIBER_MODEL=a        the model writing L4/L5/L11 descriptions
  HVBENCH_MIN_ANSWERERS=3          the fewest answering models a synthesis ensemble runs with

A variable that is set but empty clears the field: `HVBENCH_MLLM_GPT4O_API_KEY_ENV=` means "no key",
an empty BASE_URL leaves the entry unconfigured, an empty boolean is false; numbers have no empty
value, so an empty (or malformed) numeric variable is an error naming it. An unset variable changes
nothing. A name with no file entry is defined by its variables alone when HVBENCH_MLLM_<NAME>_BASE_URL
(or _LOCAL_PATH) is set, taking the file's [defaults] for the rest.

This module reads no environment itself: the caller passes `environ` (the overrides above) and `keys` (where
the variables named by `api_key_env` are looked up at call time; default `environ`), e.g. the process environment from
hvbench_assets/settings_table.py:model_registry. Tests pass plain dicts.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from hvbench_assets.core.settings import PROJECT_ROOT

DEFAULT_MODELS_FILE = PROJECT_ROOT / "config" / "models.toml"
BACKENDS = ("openai", "transformers")


class ModelNotConfigured(LookupError):
    """A model name that is unknown or lacks the settings needed to reach it. The message lists them."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    model_id: str
    backend: str = "openai"  # openai (any OpenAI-compatible endpoint) | transformers (local weights)
    base_url: str = ""
    api_key_env: str = ""  # empty: the endpoint needs no key (a local vLLM)
    weight: float = 1.0  # vote weight in the answer ensemble
    max_frames: int = 16  # images per request; some APIs cap it
    max_side: int = 768  # longest frame side sent
    jpeg_quality: int = 85
    accepts_audio: bool = False  # send an `input_audio` part when the caller gives audio
    timeout_s: float = 120.0
    max_concurrency: int = 4  # in-flight requests per process
    local_path: str = ""  # transformers backend: a folder with weights + processor
    device: str = "auto"  # transformers backend: auto (a CUDA GPU when torch sees one, else cpu) | cpu | cuda | cuda:N
    dtype: str = "auto"  # transformers: auto (bfloat16/float16 on a GPU, float32 on cpu) | float32 | bfloat16 | float16
    extra_params: dict = field(default_factory=dict)  # default request params (temperature, max_tokens)
    rename_params: dict = field(default_factory=dict)  # e.g. {max_tokens = "max_completion_tokens"} for o-series
    drop_params: list = field(default_factory=list)  # params this endpoint rejects, e.g. ["temperature"]
    # where the variable named by api_key_env is read at call time (set by the registry; never logged)
    keys: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def env_prefix(self) -> str:
        return env_prefix(self.name)

    def missing_settings(self) -> list[str]:
        """The settings still needed before this model can be called (empty when usable)."""
        missing = []
        if self.backend == "openai":
            if not self.base_url:
                missing.append(f"{self.env_prefix}_BASE_URL (or base_url in the [{self.name}] entry)")
            if self.api_key_env and not self.keys.get(self.api_key_env, "").strip():
                missing.append(f"{self.api_key_env} (API key for {self.name})")
        elif not self.local_path:
            missing.append(f"{self.env_prefix}_LOCAL_PATH (a folder holding {self.model_id} weights + processor)")
        return missing

    def request_params(self, params: Mapping | None) -> dict:
        """The entry's defaults, then the caller's params, adapted to what this endpoint accepts."""
        merged = {**self.extra_params, **(params or {})}
        for old, new in self.rename_params.items():
            if old in merged:
                merged.setdefault(new, merged.pop(old))
        for name in self.drop_params:
            merged.pop(name, None)
        return merged

    def api_key(self) -> str:
        """The key from `keys` (the environment) at call time; endpoints without auth get a dummy value
        because the openai client insists on one."""
        if not self.api_key_env:
            return "EMPTY"
        key = self.keys.get(self.api_key_env, "").strip()
        if not key:
            raise ModelNotConfigured(f"model {self.name!r}: environment variable {self.api_key_env} is not set")
        return key

    def torch_device(self) -> str:
        """Where a local (transformers) model runs, resolved (core/devices.py); '' for an endpoint."""
        if self.backend != "transformers":
            return ""
        from hvbench_assets.core.devices import resolve_device

        return resolve_device(self.device, f"{self.env_prefix}_DEVICE")

    @property
    def provenance_model(self) -> str:
        """What label rows record as their model: the id, plus the device for local weights."""
        device = self.torch_device()
        if not device:
            return self.model_id
        from hvbench_assets.core.devices import provenance_text

        return provenance_text(self.model_id, device)

    @property
    def endpoint(self) -> str:
        """Where requests go, safe to log: base URL without credentials or query string."""
        return safe_url(self.base_url) if self.backend == "openai" else self.local_path

    def describe(self) -> dict:
        """A loggable summary: no key, only the variable name that holds it."""
        return {
            "name": self.name, "model_id": self.model_id, "backend": self.backend, "endpoint": self.endpoint,
            "api_key_env": self.api_key_env, "weight": self.weight, "max_frames": self.max_frames,
            "max_side": self.max_side, "accepts_audio": self.accepts_audio, "timeout_s": self.timeout_s,
            "max_concurrency": self.max_concurrency,
            **({"device": self.device, "dtype": self.dtype} if self.backend == "transformers" else {}),
        }


def safe_url(url: str) -> str:
    """A URL without user:password@ and without ?query (some gateways put keys there)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")) if parts.scheme else url.split("?")[0]


def env_prefix(name: str) -> str:
    return "HVBENCH_MLLM_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


_FIELD_TYPES = {f.name: f.type for f in fields(ModelSpec) if f.name != "keys"}


_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False,
          "": False}


def _coerce(name: str, raw: str, variable: str):
    kind, value = _FIELD_TYPES[name], raw.strip()
    try:
        if kind == "bool":
            return _BOOLS[value.lower()]
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
    except (KeyError, ValueError):
        expected = {"bool": "true/false", "int": "a whole number", "float": "a number"}[kind]
        why = "is set but empty (unset it to keep the file's value)" if not value else f"is {raw!r}"
        raise ValueError(f"{variable} {why}; expected {expected}") from None
    return value


def _env_fields(prefix: str, environ: Mapping[str, str]) -> dict:
    """Fields set by HVBENCH_MLLM_<NAME>_* variables; set-but-empty clears (see module docstring)."""
    changes = {}
    aliases = {"MODEL": "model_id"}
    for f in fields(ModelSpec):
        if f.name not in _FIELD_TYPES or f.name == "name" or f.type not in ("str", "int", "float", "bool"):
            continue
        for suffix in [k for k, v in aliases.items() if v == f.name] + [f.name.upper()]:
            variable = f"{prefix}_{suffix}"
            if variable in environ:
                changes[f.name] = _coerce(f.name, environ[variable], variable)
    return changes


def _apply_env(spec: ModelSpec, environ: Mapping[str, str]) -> ModelSpec:
    changes = _env_fields(spec.env_prefix, environ)
    return replace(spec, **changes) if changes else spec


@dataclass(frozen=True)
class ModelRegistry:
    models: dict[str, ModelSpec]
    active_names: tuple[str, ...] = ()
    describer_name: str = ""
    min_answerers: int = 3  # synthesis: fewer active models than this and the descriptive tasks are blocked
    source: str = ""
    defaults: dict = field(default_factory=dict, compare=False, repr=False)  # the file's [defaults]
    environ: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # the overrides
    keys: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # where API keys are read

    def env_model(self, name: str) -> ModelSpec | None:
        """A model defined only by HVBENCH_MLLM_<NAME>_* variables (BASE_URL or LOCAL_PATH set)."""
        environ = self.environ
        prefix = env_prefix(name)
        if not any(environ.get(f"{prefix}_{k}", "").strip() for k in ("BASE_URL", "LOCAL_PATH")):
            return None
        merged = {**self.defaults, "model_id": name, **_env_fields(prefix, environ)}
        if "backend" not in merged:
            merged["backend"] = "openai" if environ.get(f"{prefix}_BASE_URL", "").strip() else "transformers"
        return ModelSpec(name=name, **merged, keys=self.keys)

    def unknown_message(self, name: str) -> str:
        prefix = env_prefix(name)
        return (
            f"unknown model {name!r}. The model registry is {self.source or DEFAULT_MODELS_FILE} (chosen by "
            f"HVBENCH_MODELS_FILE, or --models-file on the command line; default config/models.toml) and it defines: "
            f"{', '.join(sorted(self.models)) or 'nothing'}. Define {name!r} in one of these ways: "
            f"(1) add a [models.{name}] entry with model_id, base_url and api_key_env (the NAME of the variable holding "
            f"the key) to that file, or to your own TOML file that HVBENCH_MODELS_FILE points at; "
            f"(2) without a file entry, set {prefix}_BASE_URL and {prefix}_MODEL (plus {prefix}_API_KEY_ENV when the "
            f"endpoint wants a key). Every field of an entry can be overridden by {prefix}_<FIELD>. Several models side "
            f"by side: one [models.<name>] entry (or one set of HVBENCH_MLLM_<NAME>_* variables) per model, then "
            f"`--model a --model b` or HVBENCH_MLLM_MODELS=a,b."
        )

    def get(self, name: str) -> ModelSpec:
        """The named model, ready to call. Raises ModelNotConfigured naming what to set."""
        spec = self.models.get(name) or self.env_model(name)
        if spec is None:
            raise ModelNotConfigured(self.unknown_message(name))
        missing = spec.missing_settings()
        if missing:
            raise ModelNotConfigured(f"model {name!r} is not configured: set {'; '.join(missing)}")
        return spec

    def env_names(self) -> list[str]:
        """Models defined by their variables alone (HVBENCH_MLLM_<NAME>_BASE_URL or _LOCAL_PATH set, no file entry
        of that name), lower-cased as `--model` and HVBENCH_MLLM_MODELS name them."""
        taken = {env_prefix(n) for n in self.models}
        found = (m.group(1).lower() for k, v in self.environ.items() if v.strip()
                 and (m := re.fullmatch(r"HVBENCH_MLLM_(.+)_(?:BASE_URL|LOCAL_PATH)", k)))
        return sorted({n for n in found if env_prefix(n) not in taken})

    def configured(self) -> list[ModelSpec]:
        """Every model ready to call: file entries and models defined by their variables alone."""
        env = [spec for n in self.env_names() if (spec := self.env_model(n)) is not None]
        return [m for m in [*self.models.values(), *env] if not m.missing_settings()]

    def active(self) -> list[ModelSpec]:
        """The models an ensemble or evaluation should use: HVBENCH_MLLM_MODELS, else all configured."""
        if self.active_names:
            return [self.get(n) for n in self.active_names]
        return self.configured()

    def display_names(self) -> dict[str, str]:
        """Entry name -> the model's id, the name a reader knows it by (`gpt4o` -> `gpt-4o`): every file entry, and
        the active and describer models defined by their variables alone."""
        names = [*self.models, *self.active_names, *([self.describer_name] if self.describer_name else [])]
        return {n: spec.model_id for n in dict.fromkeys(names)
                if (spec := self.models.get(n) or self.env_model(n)) is not None and spec.model_id}

    def describer(self) -> ModelSpec:
        """The model writing L4/L5/L11; fails naming every setting still missing."""
        if not self.describer_name:
            raise ModelNotConfigured(
                "no describer model: set HVBENCH_DESCRIBER_MODEL to an entry of "
                f"{self.source or DEFAULT_MODELS_FILE} (known: {', '.join(sorted(self.models)) or 'none'}) "
                "and that entry's endpoint (HVBENCH_MLLM_<NAME>_BASE_URL, plus its API key variable if it has one)"
            )
        return self.get(self.describer_name)


def parse_registry(data: Mapping, environ: Mapping[str, str] | None = None, source: str = "",
                   keys: Mapping[str, str] | None = None, active: str = "", describer: str = "",
                   min_answerers: str | int = "") -> ModelRegistry:
    """`environ`: the HVBENCH_MLLM_<NAME>_* overrides (none when None); `keys`: where API keys are read (default
    `environ`); `active` ("a,b", HVBENCH_MLLM_MODELS), `describer` (HVBENCH_DESCRIBER_MODEL) and `min_answerers`
    (HVBENCH_MIN_ANSWERERS) replace the file's values when given (settings_table.registry_settings)."""
    environ = {} if environ is None else environ
    keys = environ if keys is None else keys
    defaults = dict(data.get("defaults", {}))
    models: dict[str, ModelSpec] = {}
    for name, entry in dict(data.get("models", {})).items():
        merged = {**defaults, **entry}
        unknown = set(merged) - set(_FIELD_TYPES)
        if unknown:
            raise ValueError(f"{source}: model {name!r} has unknown fields {sorted(unknown)}")
        if "model_id" not in merged:
            raise ValueError(f"{source}: model {name!r} needs model_id")
        spec = _apply_env(ModelSpec(name=name, **merged, keys=keys), environ)
        if spec.backend not in BACKENDS:
            raise ValueError(f"{source}: model {name!r} backend must be one of {BACKENDS}, got {spec.backend!r}")
        models[name] = spec
    active_names = tuple(n.strip() for n in active.split(",") if n.strip()) or tuple(data.get("active", ()))
    describer = describer.strip() or str(data.get("describer", ""))
    raw_min = str(min_answerers).strip() or data.get("min_answerers", 3)
    try:
        min_answerers = int(raw_min)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: min_answerers (or HVBENCH_MIN_ANSWERERS) must be a whole number, got {raw_min!r}") from None
    return ModelRegistry(models=models, active_names=active_names, describer_name=describer, source=source,
                         min_answerers=min_answerers,
                         defaults=defaults, environ=environ, keys=keys)


def load_registry(path: str | Path | None = None, environ: Mapping[str, str] | None = None,
                  keys: Mapping[str, str] | None = None, **settings) -> ModelRegistry:
    """`path` (HVBENCH_MODELS_FILE; default config/models.toml) parsed as parse_registry does."""
    path = Path(path or DEFAULT_MODELS_FILE)
    if not path.exists():
        raise ModelNotConfigured(f"model registry file {path} does not exist (set HVBENCH_MODELS_FILE)")
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return parse_registry(data, environ, source=str(path), keys=keys, **settings)
