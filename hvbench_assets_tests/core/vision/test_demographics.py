"""L3 rows: explicit `unavailable` offline, summaries (median age, mode with shares) when a model runs."""

from pathlib import Path

import numpy as np

from hvbench_assets.core.media import write_video
from hvbench_assets.core.vision.demographics import (
    OFFLINE_REASON,
    ConfidenceRule,
    FaceAttributes,
    demographics_rows,
    sample_face_crops,
    summarize,
)
from hvbench_assets.core.vision.tables import Track


def _track(tmp_path: Path, tid=0, n=30) -> Track:
    clip = tmp_path / f"face{tid}.mp4"
    write_video(clip, (np.full((224, 224, 3), 8 * i, np.uint8) for i in range(n)), fps=25)
    return Track("v", tid, 10, 10 + n - 1, 0.4, (10 + n - 1) / 25, 0.5, 100.0, 25.0, clip, None)


def test_offline_rows_are_unavailable_with_reason_and_no_values(tmp_path):
    rows = demographics_rows([_track(tmp_path, 0), _track(tmp_path, 1)], None)
    assert [(r["track_id"], r["status"]) for r in rows] == [(0, "unavailable"), (1, "unavailable")]
    assert all(r["reason"] == OFFLINE_REASON and "age" not in r and "gender" not in r for r in rows)


def test_summary_takes_median_age_and_mode_with_vote_share():
    attrs = [FaceAttributes(30, "Man", "white"), FaceAttributes(34, "Man", "asian"),
             FaceAttributes(50, "Woman", "white"), FaceAttributes(31, "Man", "white")]
    s = summarize(attrs)
    # DeepFace's Man / Woman are stored as male / female, as the offline models and L10 name them
    assert s["age"] == 32.5 and s["gender"] == "male" and s["gender_share"] == 0.75
    assert s["race"] == "white" and s["race_share"] == 0.75 and s["n_samples"] == 4
    assert s["votes"]["gender"] == {"male": 3, "female": 1}
    assert s["age_class"] == "adult" and s["age_confidence"] == 1.0 and s["male_score"] is None


class _BrightnessModel:
    """Stands in for DeepFace weights (absent here): reads a value from each crop, so the test can tell
    which crops were sampled."""

    model = "brightness-stand-in"
    method = "brightness"
    measured_accuracy = measured_age_accuracy = None

    def analyze(self, faces):
        return [FaceAttributes(float(f.mean()), "Man" if f.mean() < 120 else "Woman", "x") for f in faces]


def test_rows_sample_the_face_crop_clip_evenly(tmp_path):
    tr = _track(tmp_path, n=30)
    assert len(sample_face_crops(tr.face_clip_path, tr.n_frames, samples=8)) == 8
    row = demographics_rows([tr], _BrightnessModel(), samples=5, rule=ConfidenceRule(min_share=0.6, min_accuracy=0.0))[0]
    assert row["status"] == "ok" and row["n_samples"] == 5 and row["method"] == "brightness"
    # frames 0, 7, 14, 22, 29 have brightness 0..232; the median sampled frame is 14 -> ~112
    assert abs(row["age"] - 112) < 6 and row["gender"] == "male" and row["gender_share"] == 0.6


def test_missing_crop_clip_is_a_failed_row(tmp_path):
    tr = _track(tmp_path)
    tr.face_clip_path = tmp_path / "gone.mp4"
    assert demographics_rows([tr], _BrightnessModel())[0]["status"] == "failed"
