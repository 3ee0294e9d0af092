#!/usr/bin/env bash
# Installs hvbench with its test tools and runs the test-suite: scripts/test.sh [--fast] [pytest args]
# --fast skips the tests marked slow (end-to-end jobs, the demo, browser, cluster): a developer's lane; CI runs all.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 YOLO_OFFLINE=1
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then args+=(-m "not slow"); else args+=("$a"); fi
done
exec .venv/bin/python -m pytest -q "${args[@]}"
