"""L4/L5/L11 assets against a real OpenAI-compatible HTTP server on 127.0.0.1, on real clips."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.core.ingest.tables import VIDEO_PROBE
from hvbench_assets.core.media import cut_clip, probe_video
from hvbench_assets.core.mllm import MODEL_CALLS, prompts
from hvbench_assets.core.mllm.descriptions import (
    APPEARANCE_TABLE,
    FACIAL_DESCRIPTION_TABLE,
    VIDEO_CAPTION_TABLE,
)
from hvbench_assets.core.vision.tables import HUMAN_TRACK_BOXES, HUMAN_TRACKS
from hvbench_assets.defs.labels import descriptions
from hvbench_assets.defs.labels.descriptions import (
    appearance,
    facial_description,
    video_caption,
)
from hvbench_assets.defs.resources import MllmResource, SettingsResource, WarehouseResource
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply

KEY = "clip-a"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=lambda req: f"described {len(req.images)} frames") as s:
        yield s


def write_registry(tmp_path, server, **extra) -> str:
    fields = "".join(f"{k} = {v}\n" for k, v in extra.items())
    path = tmp_path / "models.toml"
    path.write_text(
        "[models.describer]\n"
        f'model_id = "org/describer-vl"\nbase_url = "{server.base_url}"\nmax_frames = 10\nmax_side = 320\n{fields}'
    )
    return str(path)


def resources(tmp_path, models_file, describer="describer"):
    return {
        "settings": SettingsResource(data_dir=str(tmp_path / "data")),
        "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")),
        "mllm": MllmResource(models_file=models_file, describer_model=describer, backoff_s=0.01, max_attempts=3),
    }


def run(assets, res):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [KEY])
    return dg.materialize(assets, partition_key=KEY, resources=res, instance=instance, raise_on_error=False)


@pytest.fixture
def clip_with_tracks(tmp_path, warehouse, man_talking_head):
    """A probed clip and two L1-shaped tracks whose crop clips are cut from the real clip, plus
    a third track for which L1 wrote no crops."""
    wh = WarehouseResource(path=str(tmp_path / "wh.duckdb")).get()
    wh.replace(VIDEO_PROBE, {"video_id": KEY}, [{**probe_video(man_talking_head).as_row(), "status": "ok", "reason": None}])
    face = cut_clip(man_talking_head, tmp_path / "t0_face.mp4", 0.0, 2.0)
    body = cut_clip(man_talking_head, tmp_path / "t0_body.mp4", 1.0, 4.0)
    rows = [
        {"track_id": 0, "status": "ok", "face_clip_path": str(face), "body_clip_path": str(body)},
        {"track_id": 1, "status": "ok", "face_clip_path": str(body), "body_clip_path": str(face)},
        {"track_id": 2, "status": "ok", "face_clip_path": None, "body_clip_path": None},
    ]
    wh.replace(HUMAN_TRACKS, {"video_id": KEY}, rows, provenance={"backend": "test", "model": "test"})
    return wh


def test_video_caption_sends_the_prompt_and_frames_and_caches(tmp_path, server, clip_with_tracks):
    res = resources(tmp_path, write_registry(tmp_path, server))
    result = run([video_caption], res)
    assert result.success
    (req,) = server.requests
    assert req.model == "org/describer-vl" and req.prompt == prompts.VIDEO_CAPTION.user
    assert req.system == prompts.VIDEO_CAPTION.system and req.body["max_tokens"] == prompts.VIDEO_CAPTION.params["max_tokens"]
    assert len(req.images) == 10  # 16 sampled, capped by the model's max_frames
    assert req.audio == []  # this model does not accept audio
    (row,) = clip_with_tracks.rows(VIDEO_CAPTION_TABLE, video_id=KEY)
    assert row["status"] == "ok" and row["text"] == "described 10 frames" and row["model"] == "org/describer-vl"
    assert row["prompt_hash"] == prompts.VIDEO_CAPTION.fingerprint and row["code_version"] == descriptions.VIDEO_CAPTION_VERSION
    call = clip_with_tracks.rows(MODEL_CALLS, id=row["call_id"])[0]
    assert call["inputs"]["video_id"] == KEY and call["inputs"]["frames_sent"] == 10
    mat = result.asset_materializations_for_node("video_caption")[0]
    assert mat.metadata["requests_sent"].value == 1

    again = run([video_caption], res)  # a rerun: same row, zero requests
    assert again.success and server.request_count == 1
    assert again.asset_materializations_for_node("video_caption")[0].metadata["cached"].value == 1
    assert clip_with_tracks.rows(VIDEO_CAPTION_TABLE, video_id=KEY)[0]["text"] == "described 10 frames"


def test_caption_sends_audio_to_models_that_take_it(tmp_path, server, clip_with_tracks):
    res = resources(tmp_path, write_registry(tmp_path, server, accepts_audio="true"))
    assert run([video_caption], res).success
    assert len(server.requests[0].audio) == 1 and server.requests[0].audio[0][:4] == b"RIFF"


def test_track_descriptions_use_the_right_crop_and_prompt(tmp_path, server, clip_with_tracks):
    res = resources(tmp_path, write_registry(tmp_path, server))
    assert run([appearance, facial_description], res).success
    by_prompt = {}
    for req in server.requests:
        by_prompt.setdefault(req.prompt, []).append(req)
    assert {len(v) for v in by_prompt.values()} == {2}  # two tracks with crops per label
    assert len(by_prompt[prompts.APPEARANCE.user][0].images) == prompts.APPEARANCE.n_frames
    assert len(by_prompt[prompts.FACIAL_DESCRIPTION.user][0].images) == 10  # 12 capped to 10

    l4 = clip_with_tracks.rows(APPEARANCE_TABLE, video_id=KEY, order_by="track_id")
    l5 = clip_with_tracks.rows(FACIAL_DESCRIPTION_TABLE, video_id=KEY, order_by="track_id")
    assert [r["status"] for r in l4] == ["ok", "ok", "unavailable"]
    assert l4[0]["clip_path"].endswith("t0_body.mp4") and l5[0]["clip_path"].endswith("t0_face.mp4")
    assert "body_clip_path" in l4[2]["reason"] and l4[2]["text"] is None
    assert all(r["prompt_hash"] == prompts.FACIAL_DESCRIPTION.fingerprint for r in l5)
    calls = {r["call_id"] for r in l4 + l5 if r["call_id"]}
    assert len(calls) == 4 and clip_with_tracks.count(MODEL_CALLS) == 4


def test_clip_without_faces_gets_a_no_faces_row_and_no_requests(tmp_path, server, clip_with_tracks):
    clip_with_tracks.replace(HUMAN_TRACKS, {"video_id": KEY},
                             [{"track_id": None, "status": "no_faces", "reason": "no face in 125 frames"}])
    assert run([appearance], resources(tmp_path, write_registry(tmp_path, server))).success
    (row,) = clip_with_tracks.rows(APPEARANCE_TABLE, video_id=KEY)
    assert (row["status"], row["track_id"], row["reason"]) == ("no_faces", None, "no face in 125 frames")
    assert server.request_count == 0


def test_no_endpoint_fails_fast_naming_the_settings(tmp_path, server, clip_with_tracks):
    path = tmp_path / "models.toml"
    path.write_text('[models.describer]\nmodel_id = "org/describer-vl"\n')
    result = run([video_caption], resources(tmp_path, str(path)))
    assert not result.success
    failure = result.failure_data_for_node("video_caption").error.message
    assert "HVBENCH_MLLM_DESCRIBER_BASE_URL" in failure
    result = run([appearance], resources(tmp_path, str(path), describer=""))
    assert "HVBENCH_DESCRIBER_MODEL" in result.failure_data_for_node("appearance").error.message
    assert server.request_count == 0 and clip_with_tracks.count(VIDEO_CAPTION_TABLE) == 0


def test_outage_fails_the_partition_and_a_refusal_becomes_a_failed_row(tmp_path, server, clip_with_tracks):
    res = resources(tmp_path, write_registry(tmp_path, server))
    server.script(*[FakeReply.server_error(503)] * 3)
    result = run([video_caption], res)
    assert not result.success and server.request_count == 3
    assert "503" in result.failure_data_for_node("video_caption").error.message
    assert clip_with_tracks.count(VIDEO_CAPTION_TABLE) == 0
    server.script(FakeReply.bad_request("content policy"))
    assert run([video_caption], res).success
    (row,) = clip_with_tracks.rows(VIDEO_CAPTION_TABLE, video_id=KEY)
    assert row["status"] == "failed" and "content policy" in row["reason"] and row["text"] is None


def test_appearance_cuts_the_body_clip_l1_did_not_write(tmp_path, server, clip_with_tracks, man_talking_head):
    """L1 writes body-crop clips only in runs that also describe appearance; L4 run later cuts them itself from
    the clip and the track's stored body boxes (and a rerun replaces its own cuts)."""
    info = probe_video(man_talking_head)
    n = 40
    boxes = [{"track_id": 0, "frame": f, "t": f / info.fps, "face_x1": 100.0, "face_y1": 50.0, "face_x2": 200.0,
              "face_y2": 150.0, "body_x1": 60.0 + f, "body_y1": 20.0, "body_x2": 260.0 + f, "body_y2": 340.0,
              "face_source": "detected", "body_source": "detected", "score": 0.9, "detector": "primary"}
             for f in range(n)]
    clip_with_tracks.replace(HUMAN_TRACKS, {"video_id": KEY}, [{"track_id": 0, "status": "ok", "fps": info.fps,
                                                                "face_clip_path": None, "body_clip_path": None}])
    clip_with_tracks.replace(HUMAN_TRACK_BOXES, {"video_id": KEY}, boxes)
    res = resources(tmp_path, write_registry(tmp_path, server))
    assert run([appearance], res).success
    (row,) = clip_with_tracks.rows(APPEARANCE_TABLE, video_id=KEY)
    assert row["status"] == "ok" and len(server.requests) == 1
    cut = Path(row["clip_path"])
    assert cut.is_file() and (tmp_path / "data" / "media" / KEY / "appearance") in cut.parents
    got = probe_video(cut, count_frames=True)
    assert (got.width, got.height, got.frame_count) == (256, 384, n)
    assert run([appearance], res).success  # a rerun cuts again and removes the first run's folder
    (again,) = clip_with_tracks.rows(APPEARANCE_TABLE, video_id=KEY)
    assert Path(again["clip_path"]).is_file() and not cut.exists()


def test_missing_crop_file_fails_naming_it(tmp_path, server, clip_with_tracks):
    clip_with_tracks.replace(HUMAN_TRACKS, {"video_id": KEY},
                             [{"track_id": 0, "status": "ok", "face_clip_path": str(tmp_path / "gone.mp4")}])
    result = run([facial_description], resources(tmp_path, write_registry(tmp_path, server)))
    assert "gone.mp4" in result.failure_data_for_node("facial_description").error.message


def test_editing_one_prompt_changes_only_that_assets_code_version(monkeypatch):
    before = {a.key.to_user_string(): a.code_versions_by_key[a.key] for a in (appearance, facial_description, video_caption)}
    edited = dataclasses.replace(prompts.FACIAL_DESCRIPTION, user=prompts.FACIAL_DESCRIPTION.user + " Be terse.")
    monkeypatch.setattr(prompts, "FACIAL_DESCRIPTION", edited)
    import hvbench_assets.core.mllm.descriptions as core_descriptions

    try:
        importlib.reload(core_descriptions)
        reloaded = importlib.reload(descriptions)
        after = {a.key.to_user_string(): a.code_versions_by_key[a.key]
                 for a in (reloaded.appearance, reloaded.facial_description, reloaded.video_caption)}
    finally:
        monkeypatch.undo()
        importlib.reload(core_descriptions)
        importlib.reload(descriptions)
    assert after["facial_description"] != before["facial_description"]
    assert edited.fingerprint in after["facial_description"]
    assert after["appearance"] == before["appearance"] and after["video_caption"] == before["video_caption"]


def test_prompt_edit_marks_exactly_that_asset_stale_in_dagster(tmp_path, server, clip_with_tracks, monkeypatch):
    """What the UI shows: after materializing, editing the L11 prompt makes video_caption stale
    (code version changed) while appearance stays fresh."""
    from dagster._core.definitions.data_version import (
        CachingStaleStatusResolver,
        StaleStatus,
    )
    from dagster._core.loader import LoadingContextForTest

    import hvbench_assets.core.mllm.descriptions as core_descriptions

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [KEY])
    res = resources(tmp_path, write_registry(tmp_path, server))
    assert dg.materialize([appearance, video_caption], partition_key=KEY, resources=res, instance=instance).success

    def statuses(mod):
        graph = dg.Definitions(assets=[mod.appearance, mod.video_caption], resources=res).resolve_asset_graph()
        resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
        return {k: resolver.get_status(dg.AssetKey(k), KEY) for k in ("appearance", "video_caption")}

    assert set(statuses(descriptions).values()) == {StaleStatus.FRESH}
    edited = dataclasses.replace(prompts.VIDEO_CAPTION, user=prompts.VIDEO_CAPTION.user + " Mention the weather.")
    monkeypatch.setattr(prompts, "VIDEO_CAPTION", edited)
    try:
        importlib.reload(core_descriptions)
        after = statuses(importlib.reload(descriptions))
    finally:
        monkeypatch.undo()
        importlib.reload(core_descriptions)
        importlib.reload(descriptions)
    assert after == {"appearance": StaleStatus.FRESH, "video_caption": StaleStatus.STALE}


def _invoke(asset, res):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", [KEY])
    ctx = dg.build_asset_context(partition_key=KEY, instance=instance)
    extra = {"settings": res["settings"]} if asset is appearance else {}
    return asset(ctx, **extra, warehouse=res["warehouse"], mllm=res["mllm"])


@pytest.mark.parametrize("asset", [video_caption, appearance], ids=["L11", "L4"])
def test_a_rejected_key_fails_the_step_at_once_without_retries_naming_the_setting(
        tmp_path, server, clip_with_tracks, monkeypatch, asset):
    monkeypatch.setenv("HVB_DESCRIBER_KEY", "wrong-key-0123456789")
    server.api_key = "right-key-9876543210"
    res = resources(tmp_path, write_registry(tmp_path, server, api_key_env='"HVB_DESCRIBER_KEY"'))
    with pytest.raises(dg.Failure) as err:
        _invoke(asset, res)
    assert err.value.allow_retries is False
    assert "HTTP 401" in err.value.description and "HVB_DESCRIBER_KEY" in err.value.description
    assert "wrong-key-0123456789" not in err.value.description
    assert server.request_count <= 2  # each call once, no client retries (L4's two tracks go out together)
    assert clip_with_tracks.count(VIDEO_CAPTION_TABLE) == 0 and clip_with_tracks.count(APPEARANCE_TABLE) == 0


def test_a_garbled_reply_becomes_a_failed_row_and_the_key_it_echoes_is_nowhere(
        tmp_path, server, clip_with_tracks, monkeypatch, caplog):
    secret = "describer-key-0123456789"
    monkeypatch.setenv("HVB_DESCRIBER_KEY", secret)
    server.api_key = secret
    res = resources(tmp_path, write_registry(tmp_path, server, api_key_env='"HVB_DESCRIBER_KEY"'))
    server.script(*[FakeReply.leaky(200)] * 3)  # max_attempts=3: the same garbage every time
    result = run([video_caption], res)
    assert result.success
    (row,) = clip_with_tracks.rows(VIDEO_CAPTION_TABLE, video_id=KEY)
    assert row["status"] == "failed" and "not JSON" in row["reason"] and "Bearer ***" in row["reason"]
    stored = str(clip_with_tracks.query("SELECT * FROM model_calls")) + str(clip_with_tracks.query("SELECT * FROM video_caption"))
    logged = " ".join(str(e) for e in result.all_events) + caplog.text
    assert secret not in stored and secret not in logged
