"""Resources shared by every stage: settings (paths, backend profile, clip filters) and the warehouse.

Every field can be set from the environment (see .env.example); a set variable shows up as an
EnvVar in the UI, an unset one falls back to the default that works from a fresh clone.
"""


import functools
import os
from pathlib import Path

import dagster as dg

from hvbench_assets.core.ingest.scenes import ClipFilter
from hvbench_assets.core.settings import default_data_dir
from hvbench_assets.core.warehouse import Warehouse


def profiled(version: str) -> str:
    """Code version plus the backend profile the code location was started with: switching
    offline <-> full swaps the models, so every partition of that asset must show as stale."""
    return f"{version}-{os.environ.get('HVBENCH_BACKEND_PROFILE', '').strip() or 'offline'}"


def env_or(name: str, default):
    """An EnvVar when the variable is set (visible as such in the UI), else the default.
    Dagster's EnvVar carries strings and ints only; floats are read here."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"environment variable {name}={raw!r} is not a number") from None
    return dg.EnvVar.int(name) if isinstance(default, int) else dg.EnvVar(name)


class HvbenchSettings(dg.ConfigurableResource):
    """Where things live and which model backends run."""

    data_dir: str = str(default_data_dir())
    inbox_dir: str = ""  # default: <data_dir>/inbox
    allowed_roots: str = ""  # folders (os.pathsep-separated) that inbox symlinks may point into
    backend_profile: str = "offline"  # offline | full
    # clip filters (see core/ingest/scenes.ClipFilter for the paper's values)
    min_clip_s: float = 1.0
    max_clip_s: float = 30.0
    min_width: int = 320
    min_height: int = 240
    min_motion: float = 1.2
    inbox_settle_s: float = 10.0
    # tasks excluded from human review (abbreviations, comma-separated; "none" = review all). Default: AVAD,SCM,HC,AST,TSA
    review_exclude: str = ""
    review_url: str = "http://127.0.0.1:8765"  # where `hvbench review` serves the review app (task pages link to it)

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
    """The DuckDB warehouse file. Empty path: <data_dir>/hvbench.duckdb."""

    path: str = ""

    def get(self) -> Warehouse:
        return _warehouse(str(self.path or (default_data_dir() / "hvbench.duckdb")))


@functools.lru_cache(maxsize=8)
def _warehouse(path: str) -> Warehouse:
    """One Warehouse per file and process, so its knowledge of created tables is kept between calls."""
    return Warehouse(path)


def build_core_resources() -> dict:
    return {
        "settings": HvbenchSettings(
            data_dir=env_or("HVBENCH_DATA_DIR", str(default_data_dir())),
            inbox_dir=env_or("HVBENCH_INBOX_DIR", ""),
            allowed_roots=env_or("HVBENCH_ALLOWED_ROOTS", ""),
            backend_profile=env_or("HVBENCH_BACKEND_PROFILE", "offline"),
            min_clip_s=env_or("HVBENCH_MIN_CLIP_S", 1.0),
            max_clip_s=env_or("HVBENCH_MAX_CLIP_S", 30.0),
            min_width=env_or("HVBENCH_MIN_WIDTH", 320),
            min_height=env_or("HVBENCH_MIN_HEIGHT", 240),
            min_motion=env_or("HVBENCH_MIN_MOTION", 1.2),
            inbox_settle_s=env_or("HVBENCH_INBOX_SETTLE_S", 10.0),
            review_exclude=env_or("HVBENCH_REVIEW_EXCLUDE", ""),
            review_url=env_or("HVBENCH_REVIEW_URL", "http://127.0.0.1:8765"),
        ),
        "warehouse": WarehouseResource(path=env_or("HVBENCH_WAREHOUSE", "")),
    }


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=build_core_resources())
