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
# constraints.txt pins every package to the versions tested together (the same on every node).
# scale: Postgres instance storage and Ray (dagster-ray), for scripts/cluster.sh and its tests.
pip_install -c constraints.txt -e '.[test,demo,scale]'
# silero-vad's wheel carries the ONNX VAD model we run with onnxruntime; its declared torch/torchaudio
# dependencies are not needed for that, so it is installed without them.
pip_install --no-deps 'silero-vad==6.2.3'
# espeak-ng synthesises the speech of the demo sample and of the audio tests (Debian package).
# Another package manager (unattended upgrades, a second set-up) may hold the apt/dpkg lock: wait for it,
# bounded, instead of giving up at once; the demo says at its end what ran without it.
APT_LOCK_WAIT_S=${APT_LOCK_WAIT_S:-300}
apt_get() { apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT_S" -o Acquire::Retries=2 "$@"; }
apt_update() {  # DPkg::Lock::Timeout does not cover the package lists' lock: retry while it is held
  local waited=0
  until apt_get update -qq; do
    grep -q "Could not get lock" "$log" && [ "$waited" -lt "$APT_LOCK_WAIT_S" ] || return 1
    sleep 5; waited=$((waited + 5))
  done
}
if ! command -v espeak-ng >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log=$(mktemp)
    # a failed update still leaves the lists of an earlier one to install from
    if ! { apt_update || true; apt_get install -y -qq espeak-ng; } >"$log" 2>&1; then
      echo "warning: could not install espeak-ng (waited up to ${APT_LOCK_WAIT_S}s for the apt lock):" >&2
      tail -n 3 "$log" | sed 's/^/  /' >&2
      echo "  the demo sample will have no speech and speech tests will be skipped; retry: apt-get install espeak-ng" >&2
    fi
    rm -f "$log"
  else
    echo "note: espeak-ng is not installed; the demo sample has no speech and tests that synthesise speech" \
         "are skipped (sudo apt-get install espeak-ng)"
  fi
fi
# Debian's chromium is the browser the review-app tests drive with Playwright (no browser download).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log=$(mktemp)
    if ! { apt_update || true; apt_get install -y -qq chromium; } >"$log" 2>&1; then
      echo "warning: could not install chromium:" >&2
      tail -n 3 "$log" | sed 's/^/  /' >&2
      echo "  the browser tests of the review app will be skipped; retry: apt-get install chromium" >&2
    fi
    rm -f "$log"
  else
    echo "note: chromium is not installed; the review app's browser tests are skipped (sudo apt-get install chromium)"
  fi
fi
