"""L3: age, gender and race per track from its face-crop clip (never the full video).

Full backend: DeepFace on a sample of the track's face crops; the track gets the median age and the mode
gender and race with their vote shares (HumanVBench appendix K). Offline: SSR-Net (core/vision/ssrnet.py)
with the shipped IMDB-WIKI gender and MegaFace-Asian age weights gives gender and age per crop, no race; the
UTKFace TFLite pair of shubham0204 is the measured alternative, and the default is an ensemble of three gender
models (core/vision/gender_ensemble.py) whose agreement is the track's gender confidence (docs/demographics.md).
Offline rows are only `ok` when the track's vote is clear, its models agree (ensemble) and the method's measured
accuracy reaches the required one (`judge`); otherwise `low_confidence`, which AVSM and the L7 voice/face veto
do not read (core/speakers/rules.face_class).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from hvbench_assets.core.media import MediaError
from hvbench_assets.core.media.frames import decoded_frames, to_bgr
from hvbench_assets.core.media.paths import to_stored
from hvbench_assets.core.media.crops import crop_to
from hvbench_assets.core.vision.full import require, require_deepface_weights

OFFLINE_REASON = (
    "no offline age/gender model configured; run with backend_profile=full (DeepFace, weights pre-seeded under "
    "$DEEPFACE_HOME/.deepface/weights) or the offline SSR-Net estimator"
)
CHILD_BELOW_YEARS = 13.0  # the age under which a face counts as a child (as AvsmParams and rules.face_class)
# L1 writes face clips as squares of (1 + 2 * 0.25) x the face box (VisionResource / TrackingParams.face_margin)
L1_FACE_MARGIN = 0.25


@dataclass(frozen=True)
class FaceAttributes:
    age: float
    gender: str  # male | female (offline) or DeepFace's Man | Woman
    race: str | None
    male_score: float | None = None  # the model's male probability, when it gives one
    members: dict[str, float] | None = None  # an ensemble's male probability per member model


@runtime_checkable
class DemographicsEstimator(Protocol):
    model: str
    method: str
    # per-track accuracy measured on labelled clips (benchmarks/face_demographics.py); None: not measured
    measured_accuracy: float | None  # gender
    measured_age_accuracy: float | None  # child / adult

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes | None]:
        """Attributes of each BGR face crop of L1's face clip; None for a crop that cannot be analysed."""
        ...


@dataclass(frozen=True)
class ConfidenceRule:
    """When an offline row may be used: a clear track vote and a model measured accurate enough."""

    min_share: float = 0.75  # share of the winning gender (and of the winning child/adult class) among crops
    min_accuracy: float = 0.9  # the estimator's measured per-track gender accuracy must reach this (0: no gate;
    # above 0 an estimator without a measured figure gives low_confidence rows)


def reframe(face_clip_image: np.ndarray, margin: float, size: int, clip_margin: float = L1_FACE_MARGIN) -> np.ndarray:
    """The centred square of an L1 face-clip frame with `margin` (share of the face box per side) around the
    face, scaled to size x size; margins wider than the clip's are padded black."""
    h, w = face_clip_image.shape[:2]
    half = min(h, w) / 2 * (1 + 2 * margin) / (1 + 2 * clip_margin)
    cx, cy = w / 2, h / 2
    return crop_to(face_clip_image, (cx - half, cy - half, cx + half, cy + half), size, size)


def _usable(face) -> bool:
    return (isinstance(face, np.ndarray) and face.ndim == 3 and face.shape[2] == 3 and min(face.shape[:2]) >= 16
            and float(face.std()) > 1.0)  # a blank (uniform) crop carries no face


class SsrNetDemographics:
    """Offline: SSR-Net gender (IMDB-WIKI weights) and age (MegaFace-Asian weights, the one that tells
    children apart on the labelled clips) on each face crop, reframed to a `margin` around the face."""

    method = "ssrnet-v1"

    def __init__(self, margin: float = 0.25, gender_weights: str = "face_gender_ssrnet",
                 age_weights: str = "face_age_ssrnet"):
        from hvbench_assets.core.published_weights import provenance, weight_path
        from hvbench_assets.core.vision.ssrnet import SsrNet, load_h5

        self.margin = margin
        self._gender = SsrNet(load_h5(weight_path(gender_weights)), v=1)
        self._age = SsrNet(load_h5(weight_path(age_weights)), v=101)
        self.measured_accuracy, self.measured_age_accuracy = MEASURED.get(("ssrnet", margin), (None, None))
        self.model = f"SSR-Net gender {provenance(gender_weights)}; age {provenance(age_weights)}; margin {margin}"

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes | None]:
        from hvbench_assets.core.vision.ssrnet import INPUT_SIZE

        ok = [i for i, f in enumerate(faces) if _usable(f)]
        out: list[FaceAttributes | None] = [None] * len(faces)
        if not ok:
            return out
        x = np.stack([reframe(faces[i], self.margin, INPUT_SIZE) for i in ok]).astype(np.float32)
        male, age = self._gender.predict(x), self._age.predict(x)
        for i, m, a in zip(ok, male, age):
            m = float(np.clip(m, 0.0, 1.0))
            out[i] = FaceAttributes(float(a), "male" if m > 0.5 else "female", None, round(m, 4))
        return out

    def male_scores(self, faces: Sequence[np.ndarray]) -> list[float]:
        """The gender network alone on usable crops (1 = male), rounded as `analyze` rounds them."""
        from hvbench_assets.core.vision.ssrnet import INPUT_SIZE

        x = np.stack([reframe(f, self.margin, INPUT_SIZE) for f in faces]).astype(np.float32)
        return [round(float(np.clip(m, 0.0, 1.0)), 4) for m in self._gender.predict(x)]


class UtkFaceTfliteDemographics:
    """Offline alternative: the UTKFace-trained TFLite pair of shubham0204/Age-Gender_Estimation_TF-Android
    (gender 128x128, age 200x200, RGB / 255; output 0 of the gender model is male, as in the app)."""

    method = "utkface-tflite-v1"

    def __init__(self, margin: float = 0.0, threads: int = 1):
        from ai_edge_litert.interpreter import Interpreter

        from hvbench_assets.core.published_weights import provenance, weight_path

        self.margin = margin
        self._nets = {}
        for name in ("face_gender", "face_age"):
            it = Interpreter(model_path=str(weight_path(name)), num_threads=threads)
            it.allocate_tensors()
            self._nets[name] = it
        self.measured_accuracy, self.measured_age_accuracy = MEASURED.get(("utkface-tflite", margin), (None, None))
        self.model = f"UTKFace TFLite gender {provenance('face_gender')}; age {provenance('face_age')}; margin {margin}"

    def male_probability(self, bgr: np.ndarray) -> float:
        g = self._run("face_gender", bgr)
        return float(g[0] / max(1e-6, float(g[0] + g[1])))

    def _run(self, name: str, bgr: np.ndarray) -> np.ndarray:
        it = self._nets[name]
        inp = it.get_input_details()[0]
        side = int(inp["shape"][1])
        rgb = cv2.cvtColor(reframe(bgr, self.margin, side), cv2.COLOR_BGR2RGB)
        it.set_tensor(inp["index"], (rgb.astype(np.float32) / 255.0)[None])
        it.invoke()
        return it.get_tensor(it.get_output_details()[0]["index"])[0]

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes | None]:
        out: list[FaceAttributes | None] = []
        for f in faces:
            if not _usable(f):
                out.append(None)
                continue
            m = self.male_probability(f)
            out.append(FaceAttributes(float(self._run("face_age", f)[0]) * 116.0, "male" if m > 0.5 else "female",
                                      None, round(m, 4)))
        return out


# Per-track accuracy over the labelled L1 tracks of every shared clip and of the speaker composites
# (benchmarks/face_demographics.py, 8 crops a track, vote share >= 0.75), by (estimator, margin): (gender,
# child/adult), each over the tracks whose vote on it is clear; for the ensemble, gender over the tracks whose models
# also agree (its AGREEMENT_BAR). Below the default 0.9 an estimator's adult rows are low_confidence.
MEASURED: dict[tuple[str, float], tuple[float, float]] = {
    ("ssrnet", 0.1): (0.68, 0.98), ("ssrnet", 0.25): (0.73, 0.98), ("ssrnet", 0.4): (0.63, 0.98),
    ("utkface-tflite", 0.0): (0.67, 0.77), ("utkface-tflite", 0.1): (0.5, 0.77), ("ensemble", 0.25): (0.93, 0.98),
}


class DeepFaceDemographics:
    """DeepFace.analyze(age, gender, race) on pre-cropped faces (detector skipped: crops come from L1)."""

    WEIGHTS = ["age_model_weights.onnx", "gender_model_weights.onnx", "race_model_single_batch.onnx"]

    def __init__(self, weights: Sequence[str] | None = None, deepface_home: str = ""):
        self._deepface = require("deepface", "deepface", "age/gender/race (L3 demographics)").DeepFace
        require_deepface_weights(list(weights or self.WEIGHTS), "age/gender/race (L3 demographics)", deepface_home)
        self.model = "deepface-age-gender-race"
        self.method = "deepface"
        self.measured_accuracy = self.measured_age_accuracy = None  # the full profile's rule has no accuracy gate

    def analyze(self, faces: Sequence[np.ndarray]) -> list[FaceAttributes | None]:
        out: list[FaceAttributes | None] = []
        for face in faces:
            res = self._deepface.analyze(img_path=face, actions=("age", "gender", "race"),
                                         detector_backend="skip", enforce_detection=False, silent=True)
            r = res[0] if isinstance(res, list) else res
            out.append(FaceAttributes(float(r["age"]), str(r["dominant_gender"]), str(r["dominant_race"])))
        return out


def sample_face_crops(face_clip: str | Path, n_frames: int, samples: int = 8) -> list[np.ndarray]:
    """`samples` frames spread evenly over a track's face-crop clip."""
    want = {int(round(i)) for i in np.linspace(0, max(0, n_frames - 1), num=min(samples, max(1, n_frames)))}
    # every frame is decoded (the clip's frames depend on each other), only the sampled ones converted to BGR
    return [to_bgr(frame) for i, (_, _, frame) in enumerate(decoded_frames(face_clip)) if i in want]


def _gender_label(g: str) -> str:
    return {"man": "male", "woman": "female"}.get(g.lower(), g.lower())


def summarize(attrs: Sequence[FaceAttributes], child_below_years: float = CHILD_BELOW_YEARS) -> dict:
    """Median age, mode gender, race and child/adult class with vote shares (ties: first occurrence)."""
    genders = Counter(_gender_label(a.gender) for a in attrs)
    gender, g_votes = genders.most_common(1)[0]
    scores = [a.male_score for a in attrs if a.male_score is not None]
    if len(genders) == 2 and min(genders.values()) == g_votes and scores and set(genders) == {"male", "female"}:
        gender = "male" if np.mean(scores) > 0.5 else "female"  # a tied vote goes the way of the mean score
    classes = Counter("child" if a.age < child_below_years else "adult" for a in attrs)
    age_class, c_votes = classes.most_common(1)[0]
    races = Counter(a.race for a in attrs if a.race)
    race, r_votes = races.most_common(1)[0] if races else (None, 0)
    members = _member_votes(attrs, gender)
    return {
        "age": float(statistics.median(a.age for a in attrs)), "gender": gender,
        "gender_share": round(g_votes / len(attrs), 4), "race": race,
        "race_share": round(r_votes / len(attrs), 4) if race else None,
        "age_class": age_class, "age_confidence": round(c_votes / len(attrs), 4),
        "male_score": round(float(np.mean(scores)), 4) if scores else None,
        "votes": {"gender": dict(genders), "age_class": dict(classes), "race": dict(races),
                  "ages": [round(a.age, 1) for a in attrs], "male_scores": [round(x, 3) for x in scores],
                  **({"members": members} if members else {})},
        "gender_confidence": min(m["agree"] for m in members.values()) if members else None,
        "n_samples": len(attrs),
    }


def _member_votes(attrs: Sequence[FaceAttributes], gender: str) -> dict[str, dict]:
    """Per ensemble member: its male / female crop votes and the share agreeing with the track's `gender`."""
    out: dict[str, dict] = {}
    for name in attrs[0].members or {}:
        male = sum(1 for a in attrs if a.members[name] > 0.5)
        out[name] = {"male": male, "female": len(attrs) - male,
                     "agree": round((male if gender == "male" else len(attrs) - male) / len(attrs), 4)}
    return out


def _gate(figure: float | None, what: str, method: str, rule: ConfidenceRule) -> str | None:
    if rule.min_accuracy <= 0:
        return None
    if figure is None:
        return (f"{method}: no measured per-track {what} accuracy for this model and margin "
                f"(benchmarks/face_demographics.py); required {rule.min_accuracy:.2f}")
    if figure < rule.min_accuracy:
        return (f"{method}: measured per-track {what} accuracy {figure:.2f} < required {rule.min_accuracy:.2f} "
                "(benchmarks/face_demographics.py)")
    return None


def judge(summary: dict, estimator: DemographicsEstimator, rule: ConfidenceRule) -> tuple[str, str | None, bool]:
    """(status, reason, keep_gender) of a summarised track. `ok` needs a clear child/adult vote from a model
    measured accurate enough on it, and for an adult the same for gender (consumers read an adult's class from
    its gender); a child's row is `ok` without its gender when only the gender falls short."""
    age_problem = _gate(estimator.measured_age_accuracy, "child/adult", estimator.method, rule)
    if summary["age_confidence"] < rule.min_share:
        age_problem = (f"split child/adult vote {summary['votes']['age_class']} "
                       f"(share {summary['age_confidence']:.2f} < {rule.min_share:.2f})")
    gender_problem = _gate(estimator.measured_accuracy, "gender", estimator.method, rule)
    bar = getattr(estimator, "agreement_bar", None)
    if bar is not None and rule.min_accuracy > 0 and (summary.get("gender_confidence") or 0.0) < bar:
        votes = {k: f"{v['male']}m/{v['female']}f" for k, v in summary["votes"].get("members", {}).items()}
        gender_problem = (f"gender models disagree {votes} (agreement {summary.get('gender_confidence') or 0:.2f} "
                          f"< {bar:.2f})")
    if summary["gender_share"] < rule.min_share:
        gender_problem = (f"split gender vote {summary['votes']['gender']} "
                          f"(share {summary['gender_share']:.2f} < {rule.min_share:.2f})")
    if age_problem:
        return "low_confidence", age_problem, True
    if gender_problem and summary["age_class"] == "child":
        return "ok", f"child; gender left out: {gender_problem}", False
    if gender_problem:
        return "low_confidence", gender_problem, True
    return "ok", None, True


def demographics_rows(tracks: Sequence, estimator: DemographicsEstimator | None, samples: int = 8,
                      unavailable_reason: str = OFFLINE_REASON, rule: ConfidenceRule = ConfidenceRule(),
                      child_below_years: float = CHILD_BELOW_YEARS) -> list[dict]:
    """One row per L1 track (`Track` objects). `estimator=None` means no model here: `unavailable` rows.
    A track whose crops cannot be read or analysed gets a `failed` row; the other tracks are unaffected."""
    rows = []
    method = estimator.method if estimator is not None else None
    for tr in tracks:
        base = {"track_id": tr.track_id, "method": method}
        if estimator is None:
            rows.append({**base, "status": "unavailable", "reason": unavailable_reason})
            continue
        if not tr.face_clip_path or not Path(tr.face_clip_path).is_file():
            rows.append({**base, "status": "failed", "reason": f"face-crop clip missing: {to_stored(tr.face_clip_path)}"})
            continue
        try:
            faces = sample_face_crops(tr.face_clip_path, tr.n_frames, samples)
        except MediaError as exc:
            rows.append({**base, "status": "failed", "reason": f"face-crop clip unreadable: {to_stored(tr.face_clip_path)}: {exc}"})
            continue
        attrs = [a for a in estimator.analyze(faces) if a is not None]
        if not attrs:
            why = "no frame decoded" if not faces else f"none of {len(faces)} sampled crops could be analysed (blank or malformed)"
            rows.append({**base, "status": "failed", "reason": f"{to_stored(tr.face_clip_path)}: {why}", "n_samples": 0})
            continue
        summary = summarize(attrs, child_below_years)
        status, reason, keep_gender = judge(summary, estimator, rule)
        if not keep_gender:  # the votes stay in `votes`
            summary.update(gender=None, gender_share=None)
        rows.append({**base, "status": status, "reason": reason, **summary, "n_unusable": len(faces) - len(attrs)})
    return rows
