"""The Dagster UI as a new user meets it, in the system chromium, served by `dagster-webserver` on loopback from an
instance holding one real clip's work: a task partition's first screen shows the question and its picture, the full
key frame one click away; the label partitions show their key frame and the speaker score plot with its threshold; the
Checks tab says what each clip's check found. With HVBENCH_UI_SCREENSHOT=docs/img the tests retake the docs' pictures.
"""

from __future__ import annotations

import dagster as dg
import numpy as np
import pytest

from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.label_chain import resources
from hvbench_assets_tests.real_labels import DUO, label_metadata, labelled
from hvbench_assets_tests.review.harness import chromium_or_skip
from hvbench_assets_tests.ui_harness import dagster_ui, dismiss_welcome, new_home, screenshot, shown_image

pytestmark = pytest.mark.slow
FIRST_SCREEN = {"width": 1400, "height": 1000}
TASKS = {a.key.to_user_string(): a for a in TASK_ASSETS}


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    root = labelled(tmp_path_factory, DUO, "duo")
    home = new_home(tmp_path_factory.mktemp("dagster_home"))
    (root / "no-models.toml").write_text("")
    with dg.DagsterInstance.from_config(str(home)) as instance, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HVBENCH_DATA_DIR", str(root / "data"))  # file paths in the metadata: relative, as a user sees them
        instance.add_dynamic_partitions("videos", ["duo"])
        # ASD has a question on this clip; ER needs a model, none is configured: no question
        result = dg.materialize([TASKS["active_speaker_detection"], TASKS["emotion_recognition"]],
                                partition_key="duo", instance=instance,
                                resources=resources(root, str(root / "no-models.toml")))
        assert result.success
        # the label assets' own metadata of this clip (their chain ran on another instance), as the UI shows it
        for asset, metadata in label_metadata(tmp_path_factory, DUO, "duo").items():
            if asset in ("human_tracks", "speaker_scores"):
                instance.report_runless_asset_event(dg.AssetMaterialization(asset, partition="duo", metadata=metadata))
    with dagster_ui(home, root) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        page = browser.new_page(viewport=FIRST_SCREEN)
        dismiss_welcome(page)
        yield {"url": url, "page": page, "root": root, "home": home}
        browser.close()


def _on_first_screen(locator) -> dict:
    box = locator.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= FIRST_SCREEN["height"], box
    assert box["x"] + box["width"] <= FIRST_SCREEN["width"], box
    return box


def _open_markdown(page, label: str) -> None:
    """Click the [Show Markdown] of the metadata row `label` (not of the rows whose label starts with it)."""
    page.locator("tr", has=page.locator("td", has_text=label)).filter(
        has_not_text=f"{label}_").get_by_text("[Show Markdown]").click(timeout=60_000)


def test_task_partition_first_screen_shows_the_question_and_its_picture(ui):
    page = ui["page"]
    page.goto(f"{ui['url']}/assets/active_speaker_detection?view=partitions&partition=duo")
    try:
        page.wait_for_selector("text=question_key_frame_thumbnail", timeout=60_000)
        # the question, its options and the answer inline, and its picture beside them: no click, no scroll
        _on_first_screen(page.get_by_text("(answer)").first)
        thumb, small = shown_image(page, "question_key_frame_thumbnail")
        box = _on_first_screen(thumb)
        assert small.format == "AVIF" and small.width >= 100 and abs(box["width"] - small.width) < 1, (box, small.size)
        screenshot(page, "ui-task-question")  # the first screen, as a person opening the page sees it
        body = page.inner_text("body")
        # the full still is one click away, behind [Show Markdown]: the same picture, larger
        _open_markdown(page, "question_key_frame")
        full_img, full = shown_image(page, "question_key_frame")
        full_img.scroll_into_view_if_needed()
        assert full.format == "JPEG" and full.width > 2 * small.width
        assert abs(full.width / full.height - small.width / small.height) < 0.05
    finally:
        screenshot(page, "ui-task-partition", full_page=True)
    assert "hvbench explain" in body and "review_app" in body and "task_wide_verdicts" in body


def test_label_partitions_show_the_key_frame_and_the_speaker_plot_with_its_threshold(ui):
    page = ui["page"]
    page.goto(f"{ui['url']}/assets/human_tracks?view=partitions&partition=duo")
    page.wait_for_selector("text=key_frame_thumbnail", timeout=60_000)
    _on_first_screen(shown_image(page, "key_frame_thumbnail")[0])
    page.goto(f"{ui['url']}/assets/speaker_scores?view=partitions&partition=duo")
    page.wait_for_selector("text=score_plot_lines", timeout=60_000)
    assert " speaks" in page.inner_text("body")  # the lines' names: the speaking track says so
    _open_markdown(page, "score_plot")
    img, plot = shown_image(page, "score_plot")
    assert img.is_visible() and plot.format == "PNG" and plot.width == 720
    # the threshold (a frame speaks above 0): one black line across the plot (the grid lines are light grey)
    rgb = np.asarray(plot.convert("RGB")).astype(int)
    inner = rgb[:, 44:710]
    black_rows = [y for y in range(inner.shape[0]) if (inner[y].max(axis=1) < 60).mean() > 0.8]
    assert len(black_rows) == 1, black_rows
    grid = [y for y in range(inner.shape[0]) if (np.abs(inner[y] - 220).max(axis=1) < 8).mean() > 0.5]
    assert min(grid) < black_rows[0] < max(grid), (grid, black_rows)  # grid lines on both sides of it


def test_the_checks_tab_says_what_each_clips_check_found(ui):
    page = ui["page"]
    page.goto(f"{ui['url']}/assets/emotion_recognition?view=checks")
    no_question = page.get_by_text("No ER question for this clip (blocked by rule model")
    no_question.first.wait_for(timeout=60_000)
    body = page.inner_text("body")
    assert "none for this clip" not in body and "Partition" in body and "duo" in body
    screenshot(page, "ui-task-checks")  # where the tab opens: the latest clip's evaluation, in words
    page.goto(f"{ui['url']}/assets/active_speaker_detection?view=checks")
    page.get_by_text("ASD question q").first.wait_for(timeout=60_000)
    assert ": complete (" in page.inner_text("body")
    page.locator("button[role=tab]", has_text="Partitions").click()  # a check per clip: the tab lists the clips
    page.get_by_text("1 Partitions Selected").wait_for(timeout=30_000)
