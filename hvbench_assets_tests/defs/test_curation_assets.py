"""reviewed_questions on real task-layer questions: materialized from questions + review_decisions."""

from __future__ import annotations

import pytest

from hvbench_assets.core.curation.store import record_decision
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.defs.curation.assets import reviewed_questions
from hvbench_assets.defs.resources import SettingsResource, WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.real_labels import DUO, labelled

import dagster as dg


@pytest.fixture(scope="module")
def duo(tmp_path_factory):
    root = labelled(tmp_path_factory, DUO, "duo")
    materialize(root, "duo", TASK_ASSETS)
    return root


def run_reviewed(root, exclude=""):
    res = {"settings": SettingsResource(data_dir=str(root / "data"), review_exclude=exclude),
           "warehouse": WarehouseResource(path=str(root / "wh.duckdb"))}
    result = dg.materialize([reviewed_questions], resources=res)
    assert result.success
    return result, res["warehouse"].get()


def test_reviewed_questions_follow_decisions(duo):
    _, wh = run_reviewed(duo)
    rows = {r["abbrev"]: r for r in wh.rows(REVIEWED_QUESTIONS)}
    assert rows["ASD"]["state"] == "unreviewed" and rows["AVAD"]["state"] == "not_reviewed"
    asd = wh.rows(QUESTIONS, abbrev="ASD")[0]
    record_decision(wh, asd, "ann", "reject", reason="bad_track")
    result, wh = run_reviewed(duo)
    rows = {r["abbrev"]: r for r in wh.rows(REVIEWED_QUESTIONS)}
    assert rows["ASD"]["state"] == "rejected" and rows["ASD"]["reviewers"] == ["ann"]
    meta = result.asset_materializations_for_node("reviewed_questions")[0].metadata
    assert meta["state_rejected"].value == 1 and meta["decisions"].value == 1
    _, wh = run_reviewed(duo, exclude="none")
    assert {r["abbrev"]: r["state"] for r in wh.rows(REVIEWED_QUESTIONS)}["AVAD"] == "unreviewed"


def test_review_sensor_runs_on_new_decisions_only(duo):
    from hvbench_assets.defs.curation.sensors import review_sensor

    from dagster._core.storage.dagster_run import DagsterRun

    res = {"warehouse": WarehouseResource(path=str(duo / "wh.duckdb"))}
    instance = dg.DagsterInstance.ephemeral()

    def tick(cursor=None):
        return review_sensor(dg.build_sensor_context(instance=instance, resources=res, cursor=cursor))

    first = tick()
    assert len(first.run_requests) == 1 and first.run_requests[0].job_name in (None, "curation_job")
    assert isinstance(tick(first.cursor), dg.SkipReason)
    wh = res["warehouse"].get()
    record_decision(wh, wh.rows(QUESTIONS, abbrev="AVAD")[0], "bob", "accept")
    run = instance.add_run(DagsterRun(job_name="curation_job", status=dg.DagsterRunStatus.NOT_STARTED))
    waiting = tick(first.cursor)  # a run that has not read the tables yet takes the decision in
    assert isinstance(waiting, dg.SkipReason) and run.run_id in waiting.skip_message
    instance.report_run_canceled(run)
    after = tick(first.cursor)
    assert len(after.run_requests) == 1 and after.cursor != first.cursor
