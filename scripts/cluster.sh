#!/usr/bin/env bash
# A cluster on this machine to try scale-out (docs/scale-out.md): Postgres, a Ray head and a GPU worker node,
# a shared data root, the Dagster instance with runs on Ray, the daemon and the UI.
# Usage: scripts/cluster.sh up|down|status|env|worker start|stop [FOLDER]   (FOLDER default /tmp/hvbench-cluster)
# Needs the scale extra: pip install -c constraints.txt -e '.[scale]' (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m hvbench_assets.scale.cluster "$@"
