"""L3: age, gender and race per track from its face-crop clip (never the full video).

Full backend: DeepFace on a sample of the track's face crops; the track gets the median age and the mode
gender and race with their vote shares (HumanVBench appendix K). Offline there is no packaged model for
these attributes, so rows say `unavailable` with the reason instead of guessing.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.vision.full import require, require_deepface_weights

OFFLINE_REASON = (
    "no age/gender/race model ships inside a PyPI package and model downloads are not possible offline; "
    "run with backend_profile=full (DeepFace, weights pre-seeded under $DEEPFACE_HOME/.deepface/weights)"
)


@dataclass(frozen=True)
class FaceAttributes:
    age: float
    gender: str
    race: str


@runtime_checkable
class DemographicsEstimator(Protocol):
    model: str

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes]:
        """Attributes of each BGR face crop."""
        ...


class DeepFaceDemographics:
    """DeepFace.analyze(age, gender, race) on pre-cropped faces (detector skipped: crops come from L1)."""

    WEIGHTS = ["age_model_weights.onnx", "gender_model_weights.onnx", "race_model_single_batch.onnx"]

    def __init__(self, weights: Sequence[str] | None = None):
        self._deepface = require("deepface", "deepface", "age/gender/race (L3 demographics)").DeepFace
        require_deepface_weights(list(weights or self.WEIGHTS), "age/gender/race (L3 demographics)")
        self.model = "deepface-age-gender-race"

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes]:
        out = []
        for face in faces:
            res = self._deepface.analyze(img_path=face, actions=("age", "gender", "race"),
                                         detector_backend="skip", enforce_detection=False, silent=True)
            r = res[0] if isinstance(res, list) else res
            out.append(FaceAttributes(float(r["age"]), str(r["dominant_gender"]), str(r["dominant_race"])))
        return out


def sample_face_crops(face_clip: str | Path, n_frames: int, samples: int = 8) -> list[np.ndarray]:
    """`samples` frames spread evenly over a track's face-crop clip."""
    want = {int(round(i)) for i in np.linspace(0, max(0, n_frames - 1), num=min(samples, max(1, n_frames)))}
    return [f.image for i, f in enumerate(iter_frames(face_clip)) if i in want]


def summarize(attrs: Sequence[FaceAttributes]) -> dict:
    """Median age, mode gender and race with vote shares (ties broken by first occurrence)."""
    genders = Counter(a.gender for a in attrs)
    races = Counter(a.race for a in attrs)
    gender, g_votes = genders.most_common(1)[0]
    race, r_votes = races.most_common(1)[0]
    return {
        "age": float(statistics.median(a.age for a in attrs)), "gender": gender,
        "gender_share": round(g_votes / len(attrs), 4), "race": race, "race_share": round(r_votes / len(attrs), 4),
        "votes": {"gender": dict(genders), "race": dict(races), "ages": [round(a.age, 1) for a in attrs]},
        "n_samples": len(attrs),
    }


def demographics_rows(tracks: Sequence, estimator: DemographicsEstimator | None, samples: int = 8,
                      unavailable_reason: str = OFFLINE_REASON) -> list[dict]:
    """One row per L1 track (`Track` objects). `estimator=None` means no model here: `unavailable` rows."""
    rows = []
    for tr in tracks:
        base = {"track_id": tr.track_id}
        if estimator is None:
            rows.append({**base, "status": "unavailable", "reason": unavailable_reason})
            continue
        if not tr.face_clip_path or not Path(tr.face_clip_path).is_file():
            rows.append({**base, "status": "failed", "reason": f"face-crop clip missing: {to_stored(tr.face_clip_path)}"})
            continue
        faces = sample_face_crops(tr.face_clip_path, tr.n_frames, samples)
        attrs = estimator.analyze(faces)
        if not attrs:
            rows.append({**base, "status": "failed", "reason": "no face crop could be analysed"})
            continue
        rows.append({**base, "status": "ok", "reason": None, **summarize(attrs)})
    return rows
