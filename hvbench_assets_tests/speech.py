"""Speech from espeak-ng for tests: a test skips (fails under CI) when espeak-ng is missing, so this stays in the
tests (generated videos: hvbench_assets/testkit/media_factory.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


def synthesize_speech(text: str, dst: Path, voice: str = "en-us", speed: int = 150, pitch: int = 50) -> Path:
    """WAV speech from espeak-ng (Debian package). Skips the test when espeak-ng is missing outside CI."""
    if not espeak_available():
        import os

        msg = "espeak-ng is not installed (apt-get install espeak-ng)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", str(dst), text],
                   check=True, capture_output=True)
    return dst
