"""Every run of one file on the Runs page (docs/ui.md, "Runs of one file"), in the system chromium: two inbox files
ingested by the inbox sensor's runs, the clip sensor's batch over both files' clips (clip_offline_labels_job, its
first step only, to keep the test short) and a task run launched without the sensors' tags (as from the asset page);
filtering by the file tag the way the docs say, Filter -> Tag -> part of the name -> the key -> its value, lists the
file's ingest, label and task runs and not the other file's ingest; the documented link gives the same list."""

from __future__ import annotations

import dagster as dg
import pytest

from hvbench_assets.defs.ingest.sensors import clip_sensor
from hvbench_assets.defs.run_tags import SOURCE_TAG
from hvbench_assets.demo.main import clip_offline_labels_job
from hvbench_assets_tests.pipeline_runs import _apply, _resources, ingest_inbox, request_keys, talking_clip, use_data_root
from hvbench_assets_tests.review.harness import chromium_or_skip
from hvbench_assets_tests.ui_harness import dagster_ui, dismiss_welcome, new_home, screenshot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run ids by role: the two ingest runs, the batch over both files, the task run of a_talk's clip."""
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("runs_by_file")
    home = new_home(root / "home")
    (root / "no-models.toml").write_text("")  # the task run: a family that needs a model, none configured
    with pytest.MonkeyPatch.context() as mp:  # as the UI's code location sees them (ui_harness.ui_env)
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("HVBENCH_MODELS_FILE", str(root / "no-models.toml"))
        use_data_root(mp, root / "data", str(root / "wh.duckdb"))
        for name in ("a_talk", "b_talk"):
            talking_clip(root / "data" / "inbox" / f"{name}.mp4", seconds=2.5)
        with dg.DagsterInstance.get() as instance:
            assert sorted(ingest_inbox(instance)) == ["a_talk", "b_talk"]
            ingest = {r.tags[SOURCE_TAG]: r.run_id for r in instance.get_runs(dg.RunsFilter(job_name="raw_video_job"))}
            (request,) = _apply(clip_sensor(dg.build_sensor_context(instance=instance, resources=_resources())),
                                instance)
            clips = request_keys(request, instance)
            batch = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                   asset_selection=[dg.AssetKey("video_probe")], tags=request.tags)
            task = dg.execute_job(dg.reconstructable(clip_offline_labels_job), instance=instance,
                                  asset_selection=[dg.AssetKey("emotion_recognition")],
                                  tags={"dagster/partition": clips[0]})
            assert batch.success and task.success
    ids = {"a_ingest": ingest["a_talk.mp4"], "b_ingest": ingest["b_talk.mp4"], "batch": batch.run_id,
           "task": task.run_id}
    with dagster_ui(home, root) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        dismiss_welcome(page)
        yield {"url": url, "page": page, "ids": ids}
        browser.close()


def _wait_listed(page, wanted: set[str], left_out: set[str]) -> None:
    """Until the page lists every run of `wanted` (by its short id, as the Runs page shows it) and none of `left_out`."""
    page.wait_for_function(
        "([wanted, left]) => { const t = document.body.innerText;"
        " return wanted.every(id => t.includes(id)) && !left.some(id => t.includes(id)); }",
        arg=[sorted(i[:8] for i in wanted), sorted(i[:8] for i in left_out)], timeout=60_000)


def test_the_runs_page_filtered_by_a_file_lists_its_ingest_label_and_task_runs(runs):
    page, ids = runs["page"], runs["ids"]
    mine = {ids["a_ingest"], ids["batch"], ids["task"]}
    page.goto(f"{runs['url']}/runs")
    _wait_listed(page, mine | {ids["b_ingest"]}, set())  # every run, before filtering
    # the docs' way: Filter -> Tag -> type part of the file's name -> its key -> its one value
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("menuitem").filter(has_text="Tag").last.click()
    page.keyboard.type("a_talk")
    page.get_by_role("menuitem").filter(has_text="hvbench/file/a_talk").first.click()
    page.get_by_role("menuitem").filter(has_text="a_talk.mp4").first.click()
    page.keyboard.press("Escape")
    _wait_listed(page, mine, {ids["b_ingest"]})
    assert "tag%3Ahvbench%2Ffile%2Fa_talk%3Da_talk.mp4" in page.url
    body = page.inner_text("body")
    assert "raw_video_job" in body and "clip_offline_labels_jo" in body  # ingest; labels and the task (one job)
    page.mouse.click(1000, 900)  # close the filter menu for the picture
    screenshot(page, "ui-runs-by-source")
    # the link docs/ui.md and `hvbench runs --file` print
    page.goto(f"{runs['url']}/runs?q[]=tag%3Ahvbench%2Ffile%2Fa_talk%3Da_talk.mp4")
    _wait_listed(page, mine, {ids["b_ingest"]})
