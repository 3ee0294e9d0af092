"""One 16 kHz mono decode per clip, shared by every audio label (in process and on disk)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE, NoAudioError, load_audio

_MEMO: dict[str, np.ndarray] = {}
_MEMO_LIMIT = 8  # clips are short; a few keep the sibling labels of one run warm
_LOCK = threading.Lock()


def cache_path(cache_dir: str | Path, sha256: str) -> Path:
    return Path(cache_dir) / f"audio_16k_{sha256[:16]}.npy"


def clip_audio(path: str | Path, sha256: str, cache_dir: str | Path | None = None) -> np.ndarray:
    """Mono float32 16 kHz audio of a clip, decoded at most once per content hash.
    A clip without an audio stream raises NoAudioError (remembered with an empty marker file)."""
    with _LOCK:
        if sha256 in _MEMO:
            return _MEMO[sha256]
    npy = cache_path(cache_dir, sha256) if cache_dir else None
    marker = npy.with_suffix(".noaudio") if npy else None
    if marker is not None and marker.exists():
        raise NoAudioError(path)
    if npy is not None and npy.exists():
        audio = np.load(npy)
    else:
        try:
            audio = load_audio(path, sample_rate=SAMPLE_RATE)
        except NoAudioError:
            if marker is not None:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.touch()
            raise
        if npy is not None:
            npy.parent.mkdir(parents=True, exist_ok=True)
            tmp = npy.with_name(f"{npy.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npy")  # writers never share a temp file
            np.save(tmp, audio)
            tmp.replace(npy)
    with _LOCK:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[sha256] = audio
    return audio
