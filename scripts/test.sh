#!/usr/bin/env bash
# Installs hvbench with its test tools and runs the test-suite: scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 YOLO_OFFLINE=1
exec .venv/bin/python -m pytest -q "$@"
