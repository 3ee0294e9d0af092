"""hvbench: raw videos of people -> a HumanVBench-style benchmark (README.md)."""

from hvbench_assets.core.settings import set_data_root_source as _set_data_root_source
from hvbench_assets.settings_table import data_dir as _data_dir

# core resolves stored media paths against the data root; the setting is read here, outside core
_set_data_root_source(_data_dir)
