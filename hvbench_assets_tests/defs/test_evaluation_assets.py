"""eval_responses (benchmark x model partitions) and eval_report, materialized through Dagster against a
real OpenAI-compatible HTTP server; the partitions sensor."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.core.evaluation import EVAL_RESPONSES
from hvbench_assets.core.evaluation.tables import (
    EVAL_DISTRACTORS,
    EVAL_ITEM_STATS,
    EVAL_TASK_SCORES,
)
from hvbench_assets.defs.evaluation.assets import eval_report, eval_responses
from hvbench_assets.defs.evaluation.partitions import (
    eval_benchmarks_partitions,
    eval_models_partitions,
)
from hvbench_assets.defs.evaluation.sensors import eval_partitions_sensor
from hvbench_assets.defs.resources import EvaluationResource, MllmResource, SettingsResource, WarehouseResource
from hvbench_assets.testkit.bench_factory import (
    ITEMS_PER_TASK,
    SPEC,
    make_benchmark,
    right_letter,
)
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply

N_ITEMS = len(SPEC) * ITEMS_PER_TASK


@pytest.fixture
def setup(tmp_path, dagster_home):
    data = tmp_path / "data"
    root = data / "benchmarks" / "toy"
    items = make_benchmark(root)
    server = FakeOpenAIServer(responder=lambda req: f"({right_letter(req.prompt, items)})"
                              if req.model == "sharp" else "I am not sure.").start()
    models = tmp_path / "models.toml"
    models.write_text("".join(f'[models.{n}]\nmodel_id = "{i}"\nbase_url = "{server.base_url}"\n'
                              for n, i in (("sharp", "sharp"), ("vague", "Vague-VL-2B"))))
    resources = {
        "settings": SettingsResource(data_dir=str(data)),
        "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb")),
        "mllm": MllmResource(models_file=str(models), max_attempts=1, backoff_s=0.01),
        "evaluation": EvaluationResource(n_frames=2),
    }
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(eval_benchmarks_partitions.name, ["toy"])
    instance.add_dynamic_partitions(eval_models_partitions.name, ["sharp", "vague"])
    yield server, resources, instance, data, models
    server.stop()


def _materialize(asset, key, resources, instance, raise_on_error=True):
    return dg.materialize([asset], partition_key=key, resources=resources, instance=instance,
                          raise_on_error=raise_on_error)


def test_responses_per_model_then_report(setup):
    server, resources, instance, data, _ = setup
    for model in ("sharp", "vague"):
        result = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": model}),
                              resources, instance)
        meta = result.asset_materializations_for_node("eval_responses")[0].metadata
        assert meta["rows"].value == N_ITEMS and meta["failed_calls"].value == 0
        assert "Overall (7 tasks)" in meta["scores"].value
        # numbers the UI plots over materializations
        assert meta["overall_pct"] == dg.MetadataValue.float(100.0 if model == "sharp" else 0.0)
        assert all(isinstance(v, dg.FloatMetadataValue) for k, v in meta.items() if k.startswith("category_pct/"))
        check = result.get_asset_check_evaluations()[0]
        assert check.check_name == "unparsed_rate" and check.passed == (model == "sharp")
    assert server.request_count == 2 * N_ITEMS
    wh = resources["warehouse"].get()
    assert wh.count(EVAL_RESPONSES, model="sharp", correct=True) == N_ITEMS
    assert wh.count(EVAL_RESPONSES, model="vague", status="unparsed") == N_ITEMS
    # re-materializing resumes: no new requests
    _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}), resources, instance)
    assert server.request_count == 2 * N_ITEMS

    report = _materialize(eval_report, "toy", resources, instance)
    meta = report.asset_materializations_for_node("eval_report")[0].metadata
    md = meta["report"].value
    assert "| sharp | 100.0 |" in md and "| vague | 0.0 |" in md
    assert meta["overall_95ci_clip_clustered"].value == {"sharp": [100.0, 100.0], "vague": [0.0, 0.0]}
    assert meta["sharp/overall_pct"] == dg.MetadataValue.float(100.0)
    assert meta["vague/overall_pct"] == dg.MetadataValue.float(0.0)
    assert any(k.startswith("sharp/category_pct/") for k in meta)
    # the report's charts as inline PNG images (and files)
    for name in ("chart_categories", "chart_tasks"):
        assert meta[name].value.startswith(f"![{name}](data:image/png;base64,")
        assert Path(meta[f"{name}_file"].value).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (data / "reports" / "toy" / "report.html").read_text()
    chart_svg = html[html.index('<div class="charts">'):]  # chart legends name the model, not its registry key
    assert ">Vague-VL-2B<" in chart_svg and ">vague<" not in chart_svg[:chart_svg.index("</div>")]
    assert wh.count(EVAL_TASK_SCORES, benchmark="toy") == 2 * len(SPEC)
    assert wh.count(EVAL_ITEM_STATS, benchmark="toy") == N_ITEMS
    picks = wh.rows(EVAL_DISTRACTORS, benchmark="toy")
    assert len(picks) == sum(n * ITEMS_PER_TASK for _, n in SPEC)
    right = [p for p in picks if p["is_answer"]]
    assert len(right) == N_ITEMS and all(p["models"] == ["sharp"] and p["text"] for p in right)


def test_failed_calls_fail_the_partition_but_keep_answers(setup):
    server, resources, instance, _, _ = setup
    server.script(FakeReply.server_error(), FakeReply.server_error())
    result = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}),
                          resources, instance, raise_on_error=False)
    assert not result.success
    wh = resources["warehouse"].get()
    assert wh.count(EVAL_RESPONSES, status="failed") == 2 and wh.count(EVAL_RESPONSES) == N_ITEMS
    server.reset()
    _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}), resources, instance)
    assert server.request_count == 2 and wh.count(EVAL_RESPONSES, status="failed") == 0


def test_unknown_benchmark_and_model_fail_with_a_reason(setup):
    _, resources, instance, _, _ = setup
    instance.add_dynamic_partitions(eval_models_partitions.name, ["ghost"])
    instance.add_dynamic_partitions(eval_benchmarks_partitions.name, ["missing"])
    bad_model = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "ghost"}),
                             resources, instance, raise_on_error=False)
    failure = [e for e in bad_model.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "ghost" in failure.event_specific_data.error.message
    bad_bench = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "missing", "model": "sharp"}),
                             resources, instance, raise_on_error=False)
    failure = [e for e in bad_bench.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "benchmark 'missing' not found" in failure.event_specific_data.error.message


def test_sensor_registers_benchmarks_and_models(setup):
    _, resources, instance, _, _ = setup
    # a folder whose name would break the benchmark x model keys is left out (and logged)
    make_benchmark(Path(resources["settings"].data_dir) / "benchmarks" / "bad|name")
    fresh = dg.DagsterInstance.ephemeral()
    ctx = dg.build_sensor_context(instance=fresh, resources={k: resources[k] for k in ("settings", "evaluation", "mllm")})
    result = eval_partitions_sensor(ctx)
    added = {(r.partitions_def_name, tuple(r.partition_keys)) for r in result.dynamic_partitions_requests}
    assert added == {("eval_benchmarks", ("toy",)), ("eval_models", ("sharp", "vague"))}


def test_asset_specs():
    assert eval_responses.partitions_def.partitions_defs[0].name == "benchmark"
    spec = eval_responses.specs_by_key[dg.AssetKey("eval_responses")]
    assert spec.group_name == "evaluation" and spec.code_version and spec.description
    report = eval_report.specs_by_key[dg.AssetKey("eval_report")]
    assert [d.asset_key for d in report.deps] == [dg.AssetKey("eval_responses")]


def test_benchmark_roots_with_a_separate_video_folder(tmp_path):
    settings = EvaluationResource(benchmarks_dir=str(tmp_path / "none"),
                                  benchmark_roots=f"hv={tmp_path}/qa|{tmp_path}/videos; other={tmp_path}/o")
    assert settings.roots(str(tmp_path)) == {"hv": (tmp_path / "qa", tmp_path / "videos"), "other": (tmp_path / "o", None)}


def test_repeats_make_seeded_runs_that_the_report_averages(setup):
    server, resources, instance, _, _ = setup
    resources = {**resources, "evaluation": EvaluationResource(n_frames=1, repeats=2)}
    result = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}), resources, instance)
    meta = result.asset_materializations_for_node("eval_responses")[0].metadata
    assert len(meta["run_ids"].value) == 2 and meta["rows"].value == 2 * N_ITEMS
    assert sorted({r.body.get("seed") for r in server.requests}) == [0, 1]
    report = _materialize(eval_report, "toy", resources, instance)
    md = report.asset_materializations_for_node("eval_report")[0].metadata["report"].value
    assert "| sharp (mean of 2) | 100.0 |" in md and "Spread over seeds" in md


def _run_with_step_retries(resources, instance, key):
    """eval_responses in a job whose steps retry twice, as a deployment with an op retry policy would."""
    job = dg.define_asset_job("eval_job", selection=[eval_responses], partitions_def=eval_responses.partitions_def,
                              op_retry_policy=dg.RetryPolicy(max_retries=2))
    defs = dg.Definitions(assets=[eval_responses], jobs=[job], resources=resources)
    return defs.resolve_job_def("eval_job").execute_in_process(partition_key=key, instance=instance, raise_on_error=False)


def test_a_rejected_key_fails_at_once_without_step_retries(setup, tmp_path, monkeypatch):
    server, resources, instance, _, models = setup
    monkeypatch.setenv("HVB_EVAL_KEY", "wrong-key-0123456789")
    server.api_key = "right-key-0123456789"
    models.write_text(models.read_text().replace('model_id = "sharp"', 'model_id = "sharp"\napi_key_env = "HVB_EVAL_KEY"'))
    result = _run_with_step_retries(resources, instance, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}))
    assert not result.success
    kinds = [e.event_type_value for e in result.all_events]
    assert kinds.count("STEP_START") == 1 and "STEP_UP_FOR_RETRY" not in kinds
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    message = failure.event_specific_data.error.message
    assert "HTTP 401" in message and "HVB_EVAL_KEY" in message and "wrong-key-0123456789" not in message
    assert server.request_count <= 4  # at most the requests in flight (concurrency 4), no retries


def test_one_garbled_reply_is_a_failed_row_and_the_step_succeeds(setup):
    server, resources, instance, _, _ = setup
    sharp = server.responder
    server.responder = lambda req: FakeReply.malformed() if "[Human_Count#1]" in req.prompt else sharp(req)
    result = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "toy", "model": "sharp"}), resources, instance)
    meta = result.asset_materializations_for_node("eval_responses")[0].metadata
    assert meta["failed_calls"].value == 1 and meta["rows"].value == N_ITEMS
    (row,) = resources["warehouse"].get().rows(EVAL_RESPONSES, status="failed")
    assert row["question_id"] == "Human_Count_1" and "not JSON" in row["error"]


def test_a_benchmark_without_its_videos_stops_once_naming_the_setting(setup):
    server, resources, instance, data, _ = setup
    root = data / "benchmarks" / "novideo"
    root.mkdir(parents=True)
    for f in (data / "benchmarks" / "toy").glob("*.jsonl"):
        (root / f.name).write_text(f.read_text())  # task files only; the videos stayed with "toy"
    instance.add_dynamic_partitions(eval_benchmarks_partitions.name, ["novideo"])
    result = _materialize(eval_responses, dg.MultiPartitionKey({"benchmark": "novideo", "model": "sharp"}),
                          resources, instance, raise_on_error=False)
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    message = failure.event_specific_data.error.message
    assert "none of the" in message and "HVBENCH_BENCHMARK_ROOTS" in message and "novideo=" in message
    assert server.request_count == 0
