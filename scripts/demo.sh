#!/usr/bin/env bash
# Installs hvbench and runs the main job on the embedded defaults (DuckDB file in data/, offline
# backends, local Dagster instance in dagster_home/), then prints what the warehouse holds.
# Usage: scripts/demo.sh [--videos DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/dagster_home}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" YOLO_OFFLINE="${YOLO_OFFLINE:-1}"
exec .venv/bin/hvbench demo "$@"
