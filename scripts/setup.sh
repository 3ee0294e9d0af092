#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: a venv in .venv with hvbench and the test tools.
# Usage: scripts/setup.sh            (sourced by demo.sh and test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
pip_install() {  # quiet, minus the noise of index locations that do not exist on every machine
  .venv/bin/python -m pip install -q "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip_install --upgrade pip
# torch 2.13.0 (CPU) is the wheel that lies on disk on our machines; it serves the Light-ASD and local
# transformers tests. The `full` extra (paper models) is separate: pip install -e '.[full]'.
pip_install -e '.[test,demo]'
# silero-vad's wheel carries the ONNX VAD model we run with onnxruntime; its declared torch/torchaudio
# dependencies are not needed for that, so it is installed without them.
pip_install --no-deps 'silero-vad==6.2.3'
# espeak-ng synthesises the speech the audio tests listen to (Debian package; skipped if we cannot install).
if ! command -v espeak-ng >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq espeak-ng) >/dev/null 2>&1 || echo "warning: could not install espeak-ng"
  else
    echo "note: espeak-ng is not installed; tests that synthesise speech will be skipped (sudo apt-get install espeak-ng)"
  fi
fi
