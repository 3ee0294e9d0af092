"""human_verdicts through Dagster with a describer on 127.0.0.1 (fake OpenAI server), and what the tasks make of
it: a drawn face gets no emotion or attitude question, the real man does."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import probe_video
from hvbench_assets.core.mllm import MODEL_CALLS
from hvbench_assets.core.tasks.labels import load_labels
from hvbench_assets.core.tasks.pipeline import run_family
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.vision.tables import HUMAN_VERDICTS
from hvbench_assets.defs.labels.descriptions import appearance, facial_description
from hvbench_assets.defs.labels.vision import human_tracks, human_verdicts, person_count
from hvbench_assets.defs.resources import MllmResource, SettingsResource, VisionResource, WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.face_kinds import DRAWN_SEED, drawn_clip
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer

AR = next(a for a in TASK_ASSETS if a.key.to_user_string() == "attitude_recognition")


def _reply(real: bool):
    def responder(req):
        if "real human being" in req.prompt:
            return json.dumps({"real": real, "confidence": 0.9, "what": "a person" if real else "a cartoon"})
        if "attitude" in req.prompt.lower() and "JSON" in req.prompt:
            return json.dumps({"question": "What is the person's attitude to the listener?", "attitude": "positive"})
        return "A face looking ahead with a calm expression."
    return responder


def _materialize(tmp_path, clip, real: bool):
    key = "c"
    with FakeOpenAIServer(responder=_reply(real)) as server:
        models = tmp_path / "models.toml"
        models.write_text(f'[models.describer]\nmodel_id = "org/describer-vl"\nbase_url = "{server.base_url}"\n'
                          "max_frames = 8\nmax_side = 224\n")
        res = {"settings": SettingsResource(data_dir=str(tmp_path / "data")),
               "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")), "vision": VisionResource(),
               "mllm": MllmResource(models_file=str(models), describer_model="describer", backoff_s=0.01,
                                    max_attempts=2)}
        wh = res["warehouse"].get()
        wh.replace(VIDEO_PROBE, {"video_id": key}, [{**probe_video(clip).as_row(), "status": "ok", "reason": None}])
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions("videos", [key])
        result = dg.materialize([human_tracks, person_count, human_verdicts, appearance, facial_description, AR],
                                partition_key=key, resources=res, instance=instance, raise_on_error=False)
        assert result.success, [e.message for e in result.all_events if e.is_failure]
        asked = [r for r in server.requests if "real human being" in r.prompt]
    return wh, key, asked


def test_drawn_face_gets_no_emotion_or_attitude_question(tmp_path):
    wh, key, asked = _materialize(tmp_path, drawn_clip(tmp_path / "drawn.mp4", DRAWN_SEED), real=False)
    verdicts = wh.rows(HUMAN_VERDICTS, video_id=key)
    assert verdicts and all(v["status"] == "ok" and not v["is_human"] for v in verdicts), verdicts
    assert all(v["method"].endswith("+ describer") and v["model_score"] == pytest.approx(0.1) for v in verdicts)
    assert len(asked) == len(verdicts) and all(len(r.images) >= 1 for r in asked)
    assert {v["call_id"] for v in verdicts} <= {c["id"] for c in wh.rows(MODEL_CALLS)}
    ar = wh.rows(TASK_CANDIDATES, video_id=key)[0]
    assert ar["status"] == "rejected" and ar["rule"] == "real_human" and "not a real person" in ar["reason"]
    assert not wh.rows(QUESTIONS, video_id=key)
    labels = load_labels(wh, key, TASK_BY_ABBREV["ER"].reads)
    for abbrev in ("ER", "ETA", "AR", "EIC", "H2T"):
        fam = TASK_BY_ABBREV[abbrev]
        out = run_family(fam, load_labels(wh, key, fam.reads))
        assert out.status == "rejected" and out.qid is None, (abbrev, out.candidate_row())
    assert labels.tracks  # L1 found the drawn face; only the verdict keeps it out


def test_real_man_is_human_and_gets_an_attitude_question(tmp_path, man_talking_head):
    wh, key, asked = _materialize(tmp_path, man_talking_head, real=True)
    verdicts = wh.rows(HUMAN_VERDICTS, video_id=key)
    assert len(verdicts) == 1 and verdicts[0]["is_human"] and verdicts[0]["score"] > 0.5
    ar = wh.rows(TASK_CANDIDATES, video_id=key)[0]
    assert ar["status"] == "selected", ar
    q = wh.rows(QUESTIONS, video_id=key)[0]
    assert "human_verdicts" in {r["table"] for r in q["label_rows"]}
