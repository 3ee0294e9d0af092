"""Is a face track a real, photographed person? Face detectors also fire on drawings, animation, statues,
printed photos and faces on screens; none of those is a person for any task.

Offline the verdict is a logistic regression over interpretable statistics of the track's face-crop clip
(`face_statistics`), with standardisation and coefficients fitted by benchmarks/real_humans.py on the
labelled clips of hvbench_assets/testkit/face_kinds.py and committed below (`MODEL`). With a describer model
the track's face crops are also shown to it (core/mllm/prompts.py REAL_HUMAN) and both scores are combined
(DESCRIBER_SHIFT).

The statistics, each over the centre of the face crop (the face itself, not its margin):
- colours: log2 of the distinct colours at 4 bits per channel (flat fills; stored, not weighted since v3:
  compression and coloured hair give drawings many colours too);
- flat: share of pixels with almost no gradient (flat fills);
- grain: median absolute difference to a 3x3 median filter (sensor noise and skin texture);
- outline: share of pixels much darker than their neighbourhood (black ink lines);
- ink: the same at half the contrast (the drawn lines of eyelids, nose and lips: drawings and digital
  paintings outline them, photographs of faces rarely have such dark thin lines);
- saturation: mean HSV saturation (stored, not weighted: see benchmarks/real_humans.py);
- skin: share of pixels in a photographed-skin chroma range (YCrCb);
- chroma: spread of the Cr channel inside skin-like pixels (grey statues have none);
- nonrigid: the change between frames 0.2 s apart left after the best affine alignment (a photo on a
  card or a statue moves as one rigid piece; faces talk and blink). Stored, not weighted: it did not
  separate a print from a still listener in the labelled clips.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import MediaError, iter_frames, probe_video
from hvbench_assets.core.vision.tables import Track

FEATURES = ("colours", "flat", "grain", "outline", "ink", "saturation", "skin", "chroma", "nonrigid")  # measured
STATS_METHOD = "face-statistics logistic regression"

# Fitted by `benchmarks/real_humans.py --write-model`: the statistics it weights (a subset of FEATURES), their
# standardisation, coefficients and the threshold (docs/real-humans.md has the held-out figures).
MODEL: dict = json.loads((Path(__file__).with_name("real_human_model.json")).read_text())
THRESHOLD = float(MODEL.get("threshold", 0.5))  # score >= THRESHOLD: a real person
# A describer's answer moves the statistics' log-odds by at most this: it sees what they cannot (a card's edge, a
# TV set), but one model's vote must not overturn a strong statistic. At the 0.4 threshold a statistics score
# below 0.08 stays rejected and one above 0.83 stays accepted whatever the describer says.
DESCRIBER_SHIFT = 2.0


@dataclass(frozen=True)
class RealHumanParams:
    samples: int = 12  # face-crop frames read per track (evenly spaced)
    pair_gap_s: float = 0.2  # the second frame of each pair for `nonrigid`
    centre: float = 0.6  # side of the centre square analysed, as a share of the crop
    threshold: float = THRESHOLD


@dataclass
class Verdict:
    """One track's verdict: `score` is the probability-like belief that it is a real person."""

    is_human: bool
    score: float
    method: str
    reasons: list[str]
    stats_score: float | None = None
    features: dict[str, float] = field(default_factory=dict)
    model_score: float | None = None  # the describer's, when asked
    model_answer: str | None = None
    n_samples: int = 0


def _centre(img: np.ndarray, share: float) -> np.ndarray:
    h, w = img.shape[:2]
    s = int(min(h, w) * share)
    y, x = (h - s) // 2, (w - s) // 2
    return img[y:y + s, x:x + s]


def frame_statistics(img: np.ndarray) -> dict[str, float]:
    """The per-frame statistics of one face region (BGR)."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    q = (img >> 4).astype(np.int32)
    codes = q[..., 0] * 256 + q[..., 1] * 16 + q[..., 2]
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    grad = np.hypot(gx, gy)
    med = cv2.medianBlur(grey, 3)
    dark = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, np.ones((7, 7), np.uint8))
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    ycc = cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb)
    cr, cb = ycc[..., 1].astype(np.float32), ycc[..., 2].astype(np.float32)
    skin = (cr >= 135) & (cr <= 175) & (cb >= 80) & (cb <= 125)
    return {
        "colours": math.log2(len(np.unique(codes)) + 1),
        "flat": float((grad < 8).mean()),
        "grain": float(np.median(np.abs(grey.astype(np.int16) - med.astype(np.int16)))
                       + np.abs(grey.astype(np.int16) - med.astype(np.int16)).mean()),
        "outline": float((dark > 60).mean()),
        "ink": float((dark > 30).mean()),
        "saturation": float(hsv[..., 1].mean() / 255.0),
        "skin": float(skin.mean()),
        "chroma": float(cr[skin].std()) if skin.sum() > 20 else 0.0,
    }


def nonrigid_change(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute grey difference (0-255) between face regions `a` and `b` after aligning `a` onto `b`
    with the best affine warp (ECC on 96 px images); what is left is what moved non-rigidly."""
    ga = cv2.resize(cv2.cvtColor(a, cv2.COLOR_BGR2GRAY), (96, 96)).astype(np.float32)
    gb = cv2.resize(cv2.cvtColor(b, cv2.COLOR_BGR2GRAY), (96, 96)).astype(np.float32)
    ga, gb = cv2.GaussianBlur(ga, (3, 3), 0), cv2.GaussianBlur(gb, (3, 3), 0)
    warp = np.eye(2, 3, dtype=np.float32)
    try:
        _, warp = cv2.findTransformECC(gb, ga, warp, cv2.MOTION_AFFINE,
                                       (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-4), None, 3)
    except cv2.error:
        pass  # no convergence: the unaligned difference is an upper bound
    aligned = cv2.warpAffine(ga, warp, (96, 96), flags=cv2.INTER_LINEAR + cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REFLECT)
    inner = slice(12, 84)
    return float(np.abs(aligned[inner, inner] - gb[inner, inner]).mean())


Pair = tuple[np.ndarray, np.ndarray | None]


def sample_pairs(clip: str | Path, params: RealHumanParams = RealHumanParams()) -> list[Pair]:
    """`params.samples` evenly spaced frames of a face-crop clip, each with the frame `pair_gap_s` later
    (None past the end), decoded in one pass."""
    info = probe_video(clip)
    n = info.frame_count or int(info.duration_s * info.fps)
    if n <= 0:
        return []
    gap = max(1, round(params.pair_gap_s * info.fps))
    firsts = sorted({int((i + 0.5) * max(1, n - gap) / params.samples) for i in range(params.samples)})
    wanted = set(firsts) | {f + gap for f in firsts}
    frames = {fr.index: fr.image for fr in iter_frames(clip) if fr.index in wanted}
    return [(frames[f], frames.get(f + gap)) for f in firsts if f in frames]


def face_statistics(pairs: Sequence[Pair], centre: float = 0.6) -> dict[str, float]:
    """Medians of the per-frame statistics and of `nonrigid` over the pairs."""
    if not pairs:
        raise ValueError("no face-crop frames to measure")
    per = [frame_statistics(_centre(a, centre)) for a, _ in pairs]
    out = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    moves = [nonrigid_change(_centre(a, centre), _centre(b, centre)) for a, b in pairs if b is not None]
    out["nonrigid"] = float(np.median(moves)) if moves else 0.0
    return out


def stats_score(features: dict[str, float], model: dict = MODEL) -> tuple[float, list[str]]:
    """(probability of a real person, the strongest contributions in words)."""
    z = model["intercept"]
    parts = []
    for name in model["features"]:
        x = math.log1p(features[name]) if name in model.get("log", ()) else features[name]
        c = model["coef"][name] * (x - model["mean"][name]) / model["scale"][name]
        z += c
        parts.append((c, name))
    p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
    parts.sort(key=lambda t: -abs(t[0]))
    reasons = [f"{name}={features[name]:.3g} {'for' if c > 0 else 'against'} a real face ({c:+.2f})"
               for c, name in parts[:3]]
    return p, reasons


@dataclass(frozen=True)
class Opinion:
    """The describer's answer on one track: `score` 0..1 for a real person, None when unusable."""

    score: float | None
    answer: str
    call_id: str | None = None


Ask = Callable[[Sequence[np.ndarray]], Opinion]


def _logit(p: float) -> float:
    p = min(1 - 1e-6, max(1e-6, p))
    return math.log(p / (1 - p))


def combine(stats: float, describer: float) -> float:
    """The statistics' score moved by the describer's log-odds, capped at DESCRIBER_SHIFT either way."""
    z = _logit(stats) + max(-DESCRIBER_SHIFT, min(DESCRIBER_SHIFT, _logit(describer)))
    return 1.0 / (1.0 + math.exp(-z))


def judge(pairs: Sequence[Pair], params: RealHumanParams = RealHumanParams(),
          ask: Ask | None = None) -> tuple[Verdict, Opinion | None]:
    """The verdict from face-crop frame pairs. With `ask` (the describer) its answer moves the statistics'
    score by a bounded amount (`combine`); an unusable answer leaves the statistics alone and is named in
    the reasons."""
    feats = face_statistics(pairs, params.centre)
    p, reasons = stats_score(feats)
    method, score, opinion = f"{STATS_METHOD} {MODEL['version']}", p, None
    if ask is not None:
        opinion = ask([a for a, _ in pairs])
        if opinion.score is not None:
            score = combine(p, opinion.score)
            method += " + describer"
            reasons = [f"describer: {opinion.answer}"] + reasons
        else:
            reasons = [f"describer gave no usable answer ({opinion.answer}): statistics alone"] + reasons
    verdict = Verdict(is_human=score >= params.threshold, score=round(score, 4), method=method, reasons=reasons,
                      stats_score=round(p, 4), features={k: round(v, 5) for k, v in feats.items()},
                      model_score=opinion.score if opinion else None, model_answer=opinion.answer if opinion else None,
                      n_samples=len(pairs))
    return verdict, opinion


def parse_opinion(text: str | None, call_id: str | None = None) -> Opinion:
    """The describer's JSON reply {"real": bool, "confidence": 0.5..1, "what": "..."} as an Opinion."""
    raw = (text or "").strip()
    start, end = raw.find("{"), raw.rfind("}")
    try:
        obj = json.loads(raw[start:end + 1]) if start >= 0 < end else None
    except json.JSONDecodeError:
        obj = None
    real = obj.get("real") if isinstance(obj, dict) else None
    if not isinstance(real, bool):
        return Opinion(None, f"unreadable reply {raw[:80]!r}", call_id)
    try:
        conf = min(1.0, max(0.5, float(obj.get("confidence", 0.75))))
    except (TypeError, ValueError):
        conf = 0.75
    what = str(obj.get("what") or "").strip()[:120]
    said = f"{'real' if real else 'not real'} ({conf:.2f}){': ' + what if what else ''}"
    return Opinion(conf if real else 1.0 - conf, said, call_id)


def version(describer: str | None = None) -> str:
    """What the verdict depends on: rule, committed coefficients, and the describer's prompt and model."""
    coefficients = hashlib.sha256(json.dumps(MODEL, sort_keys=True).encode()).hexdigest()[:8]
    base = f"rh2-d{DESCRIBER_SHIFT:.1f}-s{MODEL['version']}-{coefficients}"
    return base if describer is None else f"{base}+{describer}"


def verdict_rows(tracks: Sequence[Track], params: RealHumanParams = RealHumanParams(), ask: Ask | None = None,
                 describer: str | None = None) -> list[dict]:
    """human_verdicts rows of a clip's L1 tracks; one track whose crop clip cannot be read gets a `failed`
    row naming the file, and the others are still judged."""
    ver = version(describer if ask is not None else None)
    rows = []
    for tr in tracks:
        base = {"track_id": tr.track_id, "threshold": params.threshold, "version": ver}
        try:
            pairs = sample_pairs(tr.face_clip_path, params) if tr.face_clip_path else []
        except MediaError as exc:
            rows.append({**base, "status": "failed", "reason": f"face crop clip unreadable: {exc}"})
            continue
        if not pairs:
            rows.append({**base, "status": "failed", "reason": f"no frames in the face crop clip {tr.face_clip_path}"})
            continue
        v, opinion = judge(pairs, params, ask)
        rows.append({**base, "status": "ok", "reason": None, "is_human": v.is_human, "score": v.score,
                     "method": v.method, "reasons": v.reasons, "stats_score": v.stats_score, "features": v.features,
                     "model_score": v.model_score, "model_answer": v.model_answer,
                     "call_id": opinion.call_id if opinion else None, "n_samples": v.n_samples})
    return rows


def real_human_asker(client, spec, video_id: str) -> Ask:
    """`ask` for `judge` through the shared MLLM client (cached and logged in model_calls): the REAL_HUMAN
    prompt on a few of the track's face-crop frames. A call that outlasts the retries raises
    ModelUnreachable (rerun later); a refused or garbled answer is an Opinion without a score."""
    from hvbench_assets.core.mllm.prompts import REAL_HUMAN
    from hvbench_assets.core.mllm.backends import ModelUnreachable

    def ask(frames: Sequence[np.ndarray]) -> Opinion:
        step = max(1, len(frames) // REAL_HUMAN.n_frames)
        sent = list(frames[::step])[:REAL_HUMAN.n_frames]
        result = client.chat(spec.name, REAL_HUMAN.user, frames=sent, system=REAL_HUMAN.system,
                             params=REAL_HUMAN.params, context={"video_id": video_id, "prompt": REAL_HUMAN.name})
        if result.transient or result.fatal:
            raise ModelUnreachable(f"real-human check of {video_id}: {result.error}")
        if not result.ok:
            return Opinion(None, f"call failed: {result.error}", result.call_id)
        return parse_opinion(result.text, result.call_id)

    return ask
